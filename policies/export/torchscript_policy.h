// TorchScript policies: a trained actor exported with its observation normalization and
// metadata, and loaded back for inference. forward(obs) maps float [workers, features] to
// action logits [workers, actions]; act(obs) gives the greedy action indices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gym/observation.h"
#include "policies/export/policy_snapshot.h"

namespace dynamix {

/// Writes the TorchScript archive (whole, then renamed into place).
void save_torchscript_policy(const PolicySnapshot& snapshot, const std::filesystem::path& file);

/// The most likely action of every row of row-major `logits` [rows × actions] (the first of
/// equal maxima).
std::vector<int> greedy_of(std::span<const float> logits, std::size_t actions);

/// Policy archives are a few hundred kB; anything far larger is refused before it is read.
inline constexpr std::uintmax_t kMaxPolicyBytes = std::uintmax_t{64} << 20;
/// Most layers and units per layer, and parameters in all, a policy file may hold without
/// trusted code: far beyond what dynamix trains (two layers of 64), and small enough that a
/// decision stays cheap: a layer's activations for 65,536 workers (serve's most) take at most
/// 256 MiB.
inline constexpr std::size_t kMaxPolicyLayers = 16;
inline constexpr std::int64_t kMaxPolicyUnits = 1024;
inline constexpr std::int64_t kMaxPolicyParameters = std::int64_t{4} << 20;
/// The bytes of a policy file; PolicyFileError if it is not a regular file, is larger than
/// kMaxPolicyBytes or cannot be read.
std::string read_policy_archive(const std::filesystem::path& file);

/// Whose TorchScript code a policy file may bring.
enum class PolicyCode {
  /// Only the code save_torchscript_policy writes, byte for byte, with tensors of the names and
  /// shapes it gives them (at most 16 layers of 1024 units, 4 Mi parameters): checked before
  /// anything in the archive is loaded, so that a file cannot run code of its own.
  kDynamix,
  /// Whatever code the file holds (for a caller that pinned the file's SHA-256 on the user's
  /// word): it runs with the process's rights, each load and decision allocating at most 1 GiB
  /// through LibTorch (past it, a PolicyFileError naming forward).
  kTrusted,
};

class TorchScriptPolicy {
 public:
  /// PolicyFileError if the file is missing, is not a TorchScript archive, lacks metadata, or is
  /// not what dynamix export writes (PolicyCode::kDynamix).
  explicit TorchScriptPolicy(const std::filesystem::path& file);
  /// The same from an archive already read (for a caller that checked its bytes first), named
  /// `file` in errors, its code checked as `code` says.
  TorchScriptPolicy(const std::string& archive, const std::filesystem::path& file, PolicyCode code);
  ~TorchScriptPolicy();
  TorchScriptPolicy(TorchScriptPolicy&&) noexcept;
  TorchScriptPolicy& operator=(TorchScriptPolicy&&) noexcept;

  const PolicyMetadata& metadata() const;
  const std::filesystem::path& file() const;
  /// The spread of each feature over training, as normalization divides by it: a feature that
  /// never varied has the floor sqrt(1e-8) = 1e-4.
  std::vector<float> observation_std() const;
  /// Action logits for raw observations, row-major [workers × actions].
  std::vector<float> logits(const Observation& observation) const;
  /// The most likely action index of every worker.
  std::vector<int> greedy_actions(const Observation& observation) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dynamix
