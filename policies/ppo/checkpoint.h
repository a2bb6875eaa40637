// What a PPO checkpoint holds beside the network and optimizer: enough to resume a run exactly
// (counters, observation statistics, every environment's current episode) and to export it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "policies/export/policy_metadata.h"
#include "policies/ppo/ppo_learner.h"
#include "policies/ppo/ppo_options.h"

namespace dynamix {

/// The VectorEnv's history since its last reset: a deterministic VectorEnv replays into the
/// same state, episodes and autoresets included.
struct VectorReplay {
  /// The seed of the last VectorEnv::reset.
  std::uint64_t seed = 0;
  /// Every step since: per environment, its number of actions, then the action indices.
  std::vector<int> actions;
};

struct TrainerState {
  /// The training environment: schema, action set, bounds, k.
  PolicyMetadata environment;
  std::size_t features = 0;
  std::vector<int> hidden_sizes;
  std::uint64_t seed = 0;
  std::int64_t updates = 0;
  std::int64_t env_steps = 0;
  /// RunningMeanStd::serialize() of the observation statistics.
  std::string observation_statistics;
  float observation_clip = 10;
  std::size_t environments = 0;
  VectorReplay replay;
  /// What defined the run (PPO options, environment, scenario, total steps): a resume must
  /// repeat them.
  RunSettings settings{};
};

CheckpointExtras to_extras(const TrainerState& state);
/// Every entry range-checked; PolicyFileError naming `source` and the entry at fault.
TrainerState from_extras(const CheckpointExtras& extras, const std::string& source);

/// `dynamix export`: the policy of a checkpoint as a TorchScript file.
void export_checkpoint(const std::filesystem::path& checkpoint, const std::filesystem::path& out);

}  // namespace dynamix
