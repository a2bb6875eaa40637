// The CPU kernels dynamix-torch's math runs on, pinned to ones every x86-64 CPU has, so that the
// same seed trains the same policy.pt bytes on any x86-64 processor
// (docs/ppo.md#same-bytes-on-every-cpu).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dynamix {

/// An environment variable the libraries read once, as they load or on their first call, to
/// choose their kernels by the CPU they find.
struct PinnedVariable {
  /// Its name, as the library reads it.
  std::string_view name;
  /// The value dynamix-torch starts with.
  std::string_view value;
  /// Which library reads it and why this value.
  std::string_view why;
};

/// The variables dynamix sets when it starts dynamix-torch, each pinned to a kernel choice that
/// every x86-64 CPU can run.
std::span<const PinnedVariable> pinned_kernel_variables();

/// The variable that opts out: DYNAMIX_KERNELS=native leaves the libraries to choose by the CPU
/// (faster on some, and a seed trains another policy on another processor).
inline constexpr std::string_view kKernelsVariable = "DYNAMIX_KERNELS";

/// This process's environment, as NAME=VALUE entries.
std::vector<std::string> process_environment();

/// `environment` (NAME=VALUE entries) with every pinned variable set to its value, replacing
/// the one there (GLIBC_TUNABLES: added after the tunables there); unchanged when it has
/// DYNAMIX_KERNELS=native. Any other DYNAMIX_KERNELS value is an InputError naming it.
std::vector<std::string> with_pinned_kernels(std::vector<std::string> environment);

/// True when `environment` runs the pinned kernels: no opt-out, every pinned variable as set.
bool kernels_pinned(const std::vector<std::string>& environment);

}  // namespace dynamix
