// Rewards for the batch-size agent: the DYNAMIX per-worker reward and a time-to-target reward.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gym/env_error.h"
#include "gym/window_metrics.h"
#include "sim/training/workload.h"

namespace dynamix {

enum class RewardKind {
  /// DYNAMIX (arXiv 2510.08522): r_i = Ā + α·max{0, ΔA} − β·T_iter − δ·(log2 b_i − 5),
  /// minus η·(σ²_norm,i + σ_norm,i) for Adam.
  kDynamix,
  /// Time-to-target: accuracy gained minus the time the window took, so that an episode's
  /// return orders runs by time to target (the default; see docs/environment.md).
  kTimeToTarget,
};

std::string_view to_string(RewardKind kind);
/// "time_to_target" or "dynamix"; EnvError otherwise.
RewardKind parse_reward_kind(std::string_view name);

struct RewardOptions {
  /// Which reward the environment pays.
  RewardKind kind = RewardKind::kTimeToTarget;
  /// DYNAMIX: weight of accuracy improvement (α). The paper's weights are not public; these
  /// are assumed, reasons in docs/environment.md.
  double alpha = 10.0;
  /// DYNAMIX: weight of the mean iteration time (β), per second.
  double beta = 1.0;
  /// DYNAMIX: weight of the batch-size term (δ), per doubling above 32.
  double delta = 0.02;
  /// DYNAMIX: weight of the gradient-noise term for Adam (η).
  double eta = 0.05;
  /// Time-to-target: weight of the change of accuracy (potential-based shaping).
  double accuracy_weight = 1.0;
  /// Time-to-target: the accuracy whose change is rewarded is the simulator's noise-free
  /// validation accuracy (TrainingRun::expected_accuracy), not the window's measured train
  /// accuracy, whose sampling noise is larger than a window's change (docs/ppo.md).
  bool noise_free_accuracy = true;
  /// Time-to-target: the learner's discount γ, in (0, 1], by which the shaping discounts the new
  /// potential, paying γ^n·Φ(s') − Φ(s) for Φ the accuracy (Ng et al., ICML'99), with n =
  /// discount_exponent(shaping_discount_by_time, window). Shaping that ignores the discount pays
  /// accuracy gained early more than the same accuracy gained later (docs/environment.md).
  /// 1: undiscounted. Only with noise_free_accuracy (the measured accuracy is not a potential).
  double shaping_discount = 1.0;
  bool shaping_discount_by_time = true;
  /// Time-to-target: penalty per time_scale_s of simulated time.
  double time_weight = 0.01;
  /// Time-to-target: the time unit of the penalty; 0 means the duration of a window of k
  /// iterations at the environment's initial batch, measured at reset, which keeps rewards of
  /// slow and fast scenarios alike in size.
  double time_scale_s = 0;
  /// Time-to-target: a run whose budget ends before the target is charged, in its last
  /// reward, the time left until miss_time_s, so that every miss returns less than every run
  /// that reached the target (the return then orders runs by time to target, misses last).
  bool charge_miss = true;
  /// Time-to-target: the time a miss is charged up to; 0 means the latest time the scenario's
  /// budget can end at batches within the environment's bounds (estimated at reset).
  double miss_time_s = 0;
};

/// Per-worker rewards for one window, written into `rewards` (size = workers).
/// kTimeToTarget needs options.time_scale_s > 0 (the environment resolves 0 at reset) and
/// rewards `accuracy_change`, the window's train_accuracy_change when none is given.
void compute_rewards(const RewardOptions& options, Optimizer optimizer, const WindowMetrics& window,
                     std::span<float> rewards,
                     std::optional<double> accuracy_change = std::nullopt);
/// The power n of a learner's discount γ^n over a window of `window_s`: window_s/time_scale_s
/// when discounting by time (a semi-MDP), else 1 per decision; 1 without a time scale.
inline double discount_exponent(bool by_time, double window_s, double time_scale_s) {
  return by_time && time_scale_s > 0 ? window_s / time_scale_s : 1.0;
}

/// The extra (negative) reward of a time-to-target run that ended at `time_s` without reaching
/// its target: time_weight·(miss_time_s − time_s)/time_scale_s; 0 for other kinds or when
/// charge_miss is off.
double miss_penalty(const RewardOptions& options, double time_s);

}  // namespace dynamix
