// How training progresses under a batch-size schedule: statistical efficiency, loss, accuracy,
// the generalization cost of large batches, and per-worker gradient statistics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>

#include "sim/core/random.h"
#include "sim/training/training_options.h"
#include "sim/training/workload.h"

namespace dynamix {

/// Constants shared by every workload; the defaults and their sources are in docs/calibration.md.
struct DynamicsParameters {
  /// Exponent α of the power law in progress followed by error, loss and noise scale, for a
  /// workload without its own convergence_exponent.
  double convergence_exponent = 0.7;
  /// Knee p0 of that power law for SGD, (1 + p/p0)^-α, for a workload without its own
  /// convergence_knee.
  double convergence_knee = 0.002;
  /// Adam's knee relative to SGD's (< 1: Adam gets going faster).
  double adam_knee_factor = 0.5;
  /// Accuracy lost per unit progress and per unit of ln(S/η): an LR too small for the batch.
  double cooling_penalty = 0.01;
  /// Accuracy lost per unit progress and per unit of ln(η/r): an LR above what the batch's
  /// gradient signal supports.
  double overshoot_penalty = 0.015;
};

struct IterationStats {
  /// Measured on this iteration's batch: with sampling noise.
  double train_loss = 0;
  double train_accuracy = 0;
  /// Fraction of the way to convergence, [0, 1].
  double progress = 0;
  /// Fractional epochs done (samples / dataset_size).
  double epoch = 0;
  /// This iteration crossed an epoch boundary.
  bool epoch_completed = false;
  /// This iteration crossed a validation point (TrainingOptions::validations_per_epoch).
  bool validation_due = false;
  /// Gradient noise scale B_noise (samples) at the current loss.
  double noise_scale = 0;
  /// Statistical efficiency of this global batch, (φ + M0) / (φ + B).
  double efficiency = 0;
  /// Progress made, in reference-batch steps.
  double gain = 0;
  /// LR multiplier the rule applied relative to the reference batch.
  double lr_scale = 0;
};

/// Pollux / AdaptDL efficiency of a global batch relative to the reference batch M0
/// (Qiao et al. OSDI'21): (φ + M0) / (φ + B), φ = B_noise.
double statistical_efficiency(double batch, double reference_batch, double noise_scale);
/// AdaScale gain r = S·efficiency, S = B/M0 (Johnson et al. 2020): the most reference steps one
/// step of batch B can be worth.
double adascale_gain(double batch, double reference_batch, double noise_scale);
/// The LR factor `rule` gives at scale S and gain r, the multiplier of the base LR a job applies:
/// 1, S, √S or r.
double rule_lr_factor(LrRule rule, double scale, double gain);
/// LR factor `factor` of `rule` in SGD terms: Adam's update with LR η behaves as SGD's with η²,
/// so the square-root rule is Adam's linear rule (Malladi et al. 2022); AdaScale's gain is SGD's.
double sgd_lr_scale(LrRule rule, Optimizer optimizer, double factor);
/// The LR multiplier of `rule` at scale S and gain r, in SGD terms (the two above).
double effective_lr_scale(LrRule rule, Optimizer optimizer, double scale, double gain);
/// Reference steps made by one step with effective LR multiplier η when r is attainable: the
/// quadratic model η(2 - η/r) for η <= r (McCandlish et al. 2018, eq. 2.6), r above.
double progress_gain(double lr_scale, double gain);
/// B_noise at training loss `loss`: φ = φ_final·(L/L_final)^-γ, γ fitted so that φ goes from its
/// initial to its final value as the loss does.
double noise_scale_at_loss(const StatisticalModel& model, double loss);
/// σ of the log-normal factor on a worker's gradient statistic at per-worker batch `batch`:
/// gradient_statistic_noise, or sqrt(floor² + σ²·n_ref/batch) capped at 5 with
/// gradient_statistic_noise_samples n_ref.
double gradient_statistic_noise_at(const StatisticalModel& model, double batch);

/// One training run. Deterministic: the same seed and calls give the same numbers.
class TrainingDynamics {
 public:
  TrainingDynamics(const Workload& workload, const TrainingOptions& options, std::size_t workers,
                   std::uint64_t seed, const DynamicsParameters& parameters = {});

  /// One BSP iteration with per-worker batches (global batch = sum; each worker's gradient
  /// weighted b_i/B, so only the sum matters for progress): one per worker present, at most
  /// workers() (preempted workers take no part). Writes per-worker σ_norm and σ²_norm.
  /// O(workers), no allocation.
  IterationStats step(std::span<const int> batches, std::span<double> grad_std_norm,
                      std::span<double> grad_var_norm);
  /// The noise-free part of step for a global batch: progress, LR factor, penalty and samples
  /// move as step moves them, and nothing is drawn (the statistics' train_loss and
  /// train_accuracy stay 0). For replays that read only the noise-free curves.
  IterationStats advance(double batch);
  /// Validation accuracy now, with the sampling noise of a finite validation set. The
  /// simulator calls it at epoch ends.
  double validate();
  /// From the next step on, holds the rule's LR factor (rule_lr_factor) within [low, high]:
  /// dynamix serve's guard rail on the LR factor's change, which the environment sets each
  /// window (EnvOptions::max_lr_change). Unbounded (0, infinity) until called.
  void bound_lr_factor(double low, double high);
  /// The LR factor the last step applied (1 before the first).
  double lr_factor() const { return lr_factor_; }

  double epochs() const { return samples_ / dataset_size_; }
  double progress() const { return progress_; }
  /// Validation accuracy now, noise-free.
  double validation_accuracy() const;
  /// Accuracy the run would end at if continued forever from here (noise-free).
  double final_accuracy_estimate() const;
  /// Accuracy lost so far to large batches.
  double generalization_penalty() const { return penalty_; }
  /// Training loss and B_noise now, noise-free.
  double train_loss() const { return train_loss_; }
  double noise_scale() const { return noise_scale_; }
  std::size_t workers() const { return workers_; }

 private:
  double remaining_fraction(double progress) const;
  /// Moves progress to `progress` with the remaining fraction, loss and B_noise there, computed
  /// once: the next step and the readers between steps (a replay) all need them.
  void advance_to(double progress);
  /// Counts `batch` samples into the epoch and says whether a validation falls due.
  void count_samples(double batch, IterationStats& stats);

  StatisticalModel model_;
  TrainingOptions options_;
  DynamicsParameters parameters_;
  std::size_t workers_;
  double dataset_size_;
  double reference_steps_;
  double exponent_;
  double knee_;
  double knee_floor_;
  /// e^(-1/τ) of the plateau phase (0 without one).
  double plateau_floor_;
  double final_accuracy_;
  double noise_scale_exponent_;
  double progress_ = 0;
  /// remaining_fraction(progress_), train_loss() and noise_scale() at progress_.
  double remaining_ = 0;
  double train_loss_ = 0;
  double noise_scale_ = 0;
  double samples_ = 0;
  double penalty_ = 0;
  double lr_low_ = 0;
  double lr_high_ = std::numeric_limits<double>::infinity();
  double lr_factor_ = 1;
  Rng batch_rng_;
  Rng gradient_rng_;
  Rng validation_rng_;
};

}  // namespace dynamix
