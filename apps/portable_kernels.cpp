// The pinned kernel variables and the environment dynamix-torch starts with.
#include "apps/portable_kernels.h"

#include <algorithm>
#include <array>

#include "sim/io/input_error.h"

extern char** environ;

namespace dynamix {
namespace {

constexpr std::array kPinned = {
    PinnedVariable{
        .name = "OPENBLAS_CORETYPE",
        .value = "Prescott",
        .why = "OpenBLAS (Debian's DYNAMIC_ARCH build, where LibTorch's matrix products go) picks "
               "its GEMM kernels and their K blocking by CPU as it loads; Prescott's need SSE3 "
               "only and block K alike on every CPU"},
    PinnedVariable{
        .name = "ATEN_CPU_CAPABILITY",
        .value = "default",
        .why = "ATen picks AVX2 or AVX-512 builds of its vector kernels (reductions, tanh, "
               "softmax, Adam's updates) at its first call; default is the x86-64 baseline build"},
    PinnedVariable{
        .name = "GLIBC_TUNABLES",
        .value = "glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4",
        .why = "glibc's libm picks FMA builds of exp, log, pow, sin, cos, tan and atan on CPUs "
               "with FMA; ATen's baseline kernels and the simulator call them"},
};

constexpr std::string_view kAppended = "GLIBC_TUNABLES";

std::string_view name_of(std::string_view entry) { return entry.substr(0, entry.find('=')); }

std::string_view value_of(std::string_view entry) {
  const std::size_t equals = entry.find('=');
  return equals == std::string_view::npos ? std::string_view() : entry.substr(equals + 1);
}

/// True unless `environment` opts out; an unknown DYNAMIX_KERNELS value is an InputError.
bool pins(const std::vector<std::string>& environment) {
  for (const std::string& entry : environment) {
    if (name_of(entry) != kKernelsVariable) continue;
    const std::string_view value = value_of(entry);
    if (value == "native") return false;
    if (value != "portable") {
      throw InputError(std::string(kKernelsVariable), 0, "", "portable (the default) or native",
                       excerpt(value));
    }
  }
  return true;
}

}  // namespace

std::span<const PinnedVariable> pinned_kernel_variables() { return kPinned; }

std::vector<std::string> process_environment() {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) environment.emplace_back(*entry);
  return environment;
}

std::vector<std::string> with_pinned_kernels(std::vector<std::string> environment) {
  if (!pins(environment)) return environment;
  for (const PinnedVariable& pinned : kPinned) {
    const auto found =
        std::find_if(environment.begin(), environment.end(),
                     [&](const std::string& e) { return name_of(e) == pinned.name; });
    if (found == environment.end()) {
      environment.push_back(std::string(pinned.name) + "=" + std::string(pinned.value));
      continue;
    }
    const std::string_view was = value_of(*found);
    // glibc applies the tunables in order, so the user's others stay and the last hwcaps wins.
    if (pinned.name != kAppended || was.empty()) {
      *found = std::string(pinned.name) + "=" + std::string(pinned.value);
    } else if (!was.ends_with(pinned.value)) {
      found->append(":").append(pinned.value);
    }
  }
  return environment;
}

bool kernels_pinned(const std::vector<std::string>& environment) {
  if (!pins(environment)) return false;
  return std::all_of(kPinned.begin(), kPinned.end(), [&](const PinnedVariable& pinned) {
    return std::any_of(environment.begin(), environment.end(), [&](const std::string& entry) {
      if (name_of(entry) != pinned.name) return false;
      const std::string_view value = value_of(entry);
      return pinned.name == kAppended ? value.ends_with(pinned.value) : value == pinned.value;
    });
  });
}

}  // namespace dynamix
