// The PPO learner: a shared actor-critic over per-worker rows, action sampling, and the clipped
// update; LibTorch stays behind the pimpl.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "policies/export/policy_snapshot.h"
#include "policies/ppo/dense_network.h"
#include "policies/ppo/ppo_options.h"

namespace dynamix {

class Rng;

/// Samples collected under the current policy, one per (decision, worker); observations are
/// already normalized, row-major [samples × features].
struct Rollout {
  std::vector<float> observations;
  std::vector<int> actions;
  std::vector<float> log_probs;
  std::vector<float> values;
  std::vector<float> advantages;
  std::vector<float> returns;
  std::size_t size() const { return actions.size(); }
};

/// Means over an update's minibatches.
struct UpdateLosses {
  double policy_loss = 0;
  double value_loss = 0;
  double entropy = 0;
  double approx_kl = 0;
  double clip_fraction = 0;
  /// Minibatch gradient steps taken (fewer than epochs × minibatches after a KL stop).
  int gradient_steps = 0;
};

/// Named strings stored beside the network in a checkpoint.
using CheckpointExtras = std::vector<std::pair<std::string, std::string>>;

class PpoLearner {
 public:
  /// Orthogonal initialization (gain √2 hidden, 0.01 policy head, 1 value head) from the seed.
  /// With a `hold_action` (the index that keeps the batch), the policy head's bias starts that
  /// action at options.initial_hold_probability and spreads the rest evenly.
  PpoLearner(std::size_t features, std::size_t actions, const PpoOptions& options,
             std::optional<std::size_t> hold_action = std::nullopt);
  ~PpoLearner();
  PpoLearner(const PpoLearner&) = delete;
  PpoLearner& operator=(const PpoLearner&) = delete;

  std::size_t features() const;
  std::size_t actions() const;

  /// For each normalized row: the action π(·|row)'s inverse CDF gives for that row's uniform
  /// number in [0, 1), its log-probability and V(row). Rows that share a uniform number draw
  /// alike actions from alike distributions (coordinated exploration). Computed by a forward
  /// pass of our own (DenseNetwork), as values() is: the same bits on every x86-64 CPU, within
  /// float rounding of LibTorch's.
  void act(std::span<const float> observations, std::span<const double> uniforms,
           std::span<int> actions, std::span<float> log_probs, std::span<float> values);
  /// What act() computes in between; one per thread acting at once.
  struct ActScratch {
    DenseNetwork::Scratch actor;
    DenseNetwork::Scratch critic;
    std::vector<float> logits;
  };
  /// As act() above, in `scratch`: threads may act at once on different rows, each with its own
  /// scratch, while nothing updates the learner.
  void act(std::span<const float> observations, std::span<const double> uniforms,
           std::span<int> actions, std::span<float> log_probs, std::span<float> values,
           ActScratch& scratch) const;
  /// V(row) for each normalized row.
  void values(std::span<const float> observations, std::span<float> values);
  /// Action logits, row-major [rows × actions], from LibTorch: the exported policy.pt gives
  /// these bits exactly.
  std::vector<float> logits(std::span<const float> observations);

  /// Epochs of minibatch clipped-surrogate steps over the rollout at this learning rate.
  UpdateLosses update(const Rollout& rollout, double learning_rate, Rng& rng);

  /// The actor's layers, input first, for export.
  std::vector<DenseLayer> actor_layers() const;
  /// Every parameter, flattened in a fixed order (tests compare runs with it).
  std::vector<float> parameters() const;

  /// Network, optimizer state and extras into one file (written whole, then renamed).
  void save(const std::filesystem::path& file, const CheckpointExtras& extras) const;
  /// Restores the network and optimizer saved by save(); InputError naming the file if it is
  /// unreadable or holds another architecture.
  void load(const std::filesystem::path& file);
  /// The extras of a checkpoint, without building a learner; InputError if unreadable.
  static CheckpointExtras read_extras(const std::filesystem::path& file);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// An untrained policy of `features` inputs for `metadata` (its actions set the outputs),
/// initialized from `seed`, with identity observation normalization: what tests and benchmarks
/// of the serving path load, where the weights do not matter.
PolicySnapshot untrained_snapshot(PolicyMetadata metadata, std::size_t features,
                                  std::uint64_t seed);

}  // namespace dynamix
