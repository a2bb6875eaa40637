// Reward formulas: DYNAMIX (arXiv 2510.08522, Sec. on reward design) and time-to-target.
#include "gym/reward.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace dynamix {

std::string_view to_string(RewardKind kind) {
  switch (kind) {
    case RewardKind::kDynamix:
      return "dynamix";
    case RewardKind::kTimeToTarget:
      return "time_to_target";
  }
  return "unknown";
}

RewardKind parse_reward_kind(std::string_view name) {
  if (name == "dynamix") return RewardKind::kDynamix;
  if (name == "time_to_target") return RewardKind::kTimeToTarget;
  throw EnvError("reward: expected time_to_target or dynamix, found '" + std::string(name) + "'");
}

void compute_rewards(const RewardOptions& options, Optimizer optimizer, const WindowMetrics& window,
                     std::span<float> rewards, std::optional<double> accuracy_change) {
  DYNAMIX_CHECK(rewards.size() == window.workers.size(),
                rewards.size() << " rewards for " << window.workers.size() << " workers");
  if (options.kind == RewardKind::kTimeToTarget) {
    DYNAMIX_CHECK(options.time_scale_s > 0, "time scale " << options.time_scale_s);
    const double window_s = window.iteration_s * static_cast<double>(window.iterations);
    const double reward =
        options.accuracy_weight * accuracy_change.value_or(window.train_accuracy_change) -
        options.time_weight * window_s / options.time_scale_s;
    std::fill(rewards.begin(), rewards.end(), static_cast<float>(reward));
    return;
  }
  const double shared = window.train_accuracy +
                        options.alpha * std::max(0.0, window.train_accuracy_change) -
                        options.beta * window.iteration_s;
  for (std::size_t w = 0; w < rewards.size(); ++w) {
    const WorkerWindow& worker = window.workers[w];
    double reward = shared - options.delta * (std::log2(std::max(worker.batch_size, 1.0)) - 5);
    if (optimizer == Optimizer::kAdam) {
      reward -= options.eta * (worker.grad_var_norm + worker.grad_std_norm);
    }
    rewards[w] = static_cast<float>(reward);
  }
}

double miss_penalty(const RewardOptions& options, double time_s) {
  if (options.kind != RewardKind::kTimeToTarget || !options.charge_miss) return 0;
  DYNAMIX_CHECK(options.time_scale_s > 0, "time scale " << options.time_scale_s);
  return -options.time_weight * std::max(0.0, options.miss_time_s - time_s) / options.time_scale_s;
}

}  // namespace dynamix
