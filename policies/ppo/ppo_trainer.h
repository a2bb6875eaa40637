// PPO training of the one batch-size policy shared by every worker, on a VectorEnv, with
// checkpoints that resume a run exactly where it stopped.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <vector>

#include "gym/vector_env.h"
#include "policies/export/policy_snapshot.h"
#include "policies/ppo/ppo_learner.h"
#include "policies/ppo/ppo_options.h"

namespace dynamix {

/// What one update did, for logs and training curves.
struct UpdateStats {
  /// Updates done so far (1 after the first).
  std::int64_t update = 0;
  /// Decisions taken so far by all environments together.
  std::int64_t env_steps = 0;
  /// Worker samples this update learned from.
  std::int64_t samples = 0;
  /// Seconds since train() was called.
  double wall_s = 0;
  /// Episodes that ended during this update's rollout.
  std::int64_t episodes = 0;
  /// Mean over those episodes of Σ_t mean_i r_i,t; NaN when none ended.
  double mean_return = 0;
  /// Mean simulated duration of those episodes; NaN when none ended.
  double mean_episode_time_s = 0;
  /// Mean decisions per ended episode; NaN when none ended.
  double mean_episode_length = 0;
  double learning_rate = 0;
  /// 1 − Var(returns − values) / Var(returns) over the rollout.
  double explained_variance = 0;
  UpdateLosses losses;
};

class PpoTrainer {
 public:
  /// Called after every update; returning false stops training (an interruption).
  using Callback = std::function<bool(const UpdateStats&)>;

  /// Trains on every environment of `envs`, which must outlive the trainer. The trainer resets
  /// episodes itself (seeds derived from options.seed) so that a checkpoint can replay them.
  /// `run`: what else defines the run (scenario, total steps), kept in checkpoints beside the
  /// options. InputError naming the option if one is out of range.
  PpoTrainer(VectorEnv& envs, PpoOptions options = {}, RunSettings run = {});
  ~PpoTrainer();
  PpoTrainer(const PpoTrainer&) = delete;
  PpoTrainer& operator=(const PpoTrainer&) = delete;

  /// Updates until `total_steps` decisions (all environments together; the learning rate anneals
  /// over them) or until the callback returns false. A resumed run passes the same total.
  void train(std::int64_t total_steps, const Callback& callback = {});

  std::int64_t updates() const;
  std::int64_t env_steps() const;
  const PpoOptions& options() const;
  /// Every network parameter, flattened (runs are compared with it).
  std::vector<float> parameters() const;

  /// Network, optimizer, observation statistics, counters and each environment's episode so far.
  void save_checkpoint(const std::filesystem::path& file) const;
  /// Continues the checkpointed run on this trainer's environments: PolicyFileError naming what
  /// differs if the file is missing or unreadable, or if its run had other settings (options,
  /// environment, run settings), observation schema, action set or network.
  void load_checkpoint(const std::filesystem::path& file);

  /// The actor with its observation normalization and the environment's metadata.
  PolicySnapshot policy_snapshot() const;
  /// Writes policy.pt (TorchScript).
  void export_policy(const std::filesystem::path& file) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dynamix
