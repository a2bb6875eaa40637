// Hyper-parameters of the PPO trainer; defaults and their reasons are in docs/ppo.md.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gym/env_knobs.h"
#include "sim/io/knobs.h"

namespace dynamix {

struct PpoOptions {
  /// Root seed: network initialization, action sampling, minibatch order and episode seeds.
  std::uint64_t seed = 1;
  /// Decisions each environment takes per update (rollout length); one sample per worker each.
  int rollout_steps = 64;
  /// Updates between fresh resets of every environment (episodes then in progress are cut,
  /// with a bootstrapped value); bounds what resuming a checkpoint replays. 0: never.
  int reset_interval = 100;
  /// Optimization passes over each rollout.
  int epochs = 4;
  /// Minibatches per epoch (samples are split as evenly as their count allows).
  int minibatches = 4;
  /// Adam learning rate at the first update: larger than the reference implementation's 3e-4,
  /// which the noise and goodput bases learn better with (docs/ppo.md).
  double learning_rate = 1e-3;
  /// Anneal the learning rate linearly to zero over the run.
  bool anneal_learning_rate = true;
  /// Adam ε (1e-5 as in the PPO reference implementation, not PyTorch's 1e-8).
  double adam_epsilon = 1e-5;
  /// Discount (γ) per decision, or per unit of the reward's time (a window at the reference
  /// batch) when discount_by_time is set.
  double gamma = kTrainingDiscount;
  /// Semi-MDP discount: a decision whose window took Δt is discounted by γ^(Δt/time_scale_s),
  /// so that the discounted return does not favour batches that make windows short.
  bool discount_by_time = true;
  /// GAE λ.
  double gae_lambda = 0.95;
  /// Surrogate clipping range (ε).
  double clip_range = 0.2;
  /// Also clip the value update around the rollout's value estimate.
  bool clip_value_loss = true;
  /// Probability the untrained policy gives the action that keeps a worker's batch (the rest
  /// spread evenly); at or below 1/actions the untrained policy is uniform. A weak pull (0.5, not
  /// 0.8), which the noise and goodput bases learn better with (docs/ppo.md).
  double initial_hold_probability = 0.5;
  /// Entropy bonus coefficient.
  double entropy_coef = 0.01;
  /// Value loss coefficient.
  double value_coef = 0.5;
  /// Global gradient norm bound.
  double max_grad_norm = 0.5;
  /// Stop an update's epochs once the approximate KL exceeds this; 0 never stops.
  double target_kl = 0;
  /// Normalize advantages per minibatch.
  bool normalize_advantages = true;
  /// In rollouts, one random worker per environment and decision samples from π and the others
  /// act greedily; only the sampled actions train the policy (per-worker credit assignment).
  /// Off by default: mixed results so far (docs/ppo.md).
  bool single_explorer = false;
  /// In rollouts, every worker of an environment draws its action with the same uniform number
  /// (inverse CDF), so that workers whose policies agree change their batches together and
  /// the shared reward credits one joint change instead of many independent ones. Off by
  /// default: no better than independent draws over three training seeds (docs/ppo.md).
  bool coordinated_exploration = false;
  /// Hidden layer widths of the actor and of the critic (tanh MLPs, separate networks).
  std::vector<int> hidden_sizes = {64, 64};
  /// Normalized observations are clipped to ±this.
  double observation_clip = 10;
};

/// Named values of a run, as `dynamix train` spells the options ("seed" for --seed), in a
/// fixed order; checkpoints keep them so that a resume with other values is refused.
using RunSettings = std::vector<std::pair<std::string, std::string>>;

/// One row per option, keyed as `dynamix train` spells it ("gamma" for --gamma), in the order
/// of RunSettings; defaults from PpoOptions{}, values shown in exact text.
const KnobTable<PpoOptions>& ppo_knobs();

/// InputError naming the first option outside its range ("--gamma: expected a number in
/// (0, 1], found 2").
void validate(const PpoOptions& options);
/// Every option of ppo_knobs(), values in exact text.
RunSettings settings(const PpoOptions& options);

}  // namespace dynamix
