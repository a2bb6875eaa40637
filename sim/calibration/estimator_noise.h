// How noisy the per-window gradient-noise-scale estimate is: a real job's B_simple around its
// trend, per global batch, and the gradient-statistics noise (gradient_statistic_noise, and how
// it shrinks with the per-worker batch) that gives the simulator's estimate
// (gym/window_metrics.h measured_noise_scale) the same spread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/calibration/training_runs.h"
#include "sim/training/workload.h"

namespace dynamix {

/// Windows on each side (and the window itself) whose pooled estimate is a window's trend.
inline constexpr int kTrendHalfWidth = 4;
/// Fewest windows at a batch whose spread is reported.
inline constexpr std::size_t kMinSpreadWindows = 8;

/// A robust σ of log ratios: half the distance between their 16th and 84th percentiles (σ for a
/// normal). Ratios may be ±infinity (an estimate beyond zero on either side: ranked first or
/// last); nullopt when a percentile is infinite or there are fewer than kMinSpreadWindows.
std::optional<double> log_spread(std::vector<double> log_ratios);

/// Each window's ratio to its trend, in logs: log((t_w/g_w) / (Σt/Σg)), the sums over the
/// windows within kTrendHalfWidth of w. +infinity where g_w <= 0 < t_w (an estimate past
/// infinity), -infinity where t_w <= 0; nullopt where the trend itself is not positive.
std::vector<std::optional<double>> log_ratios_to_trend(std::span<const NoiseScaleParts> parts);

/// The spread of the simulator's per-window estimate — Σ_i mean_t(σ²_norm,i)·b_i / P, as
/// measured_noise_scale computes it — around the same kind of trend, for `workers` workers
/// sharing `global_batch` over windows of `iterations`, each σ²_norm,i drawn by TrainingDynamics
/// with the gradient-statistics noise of `noise` (gradient_statistic_noise, _samples, _floor)
/// around κ·B_noise (its noise_scale_estimate_ratio), as the simulator reports them.
/// Deterministic.
double simulated_spread(const StatisticalModel& noise, int global_batch, int workers,
                        int iterations);
/// The same with a gradient_statistic_noise that is one σ at every batch.
double simulated_spread(double gradient_statistic_noise, int global_batch, int workers,
                        int iterations, double noise_scale_estimate_ratio = 1.0);

/// The gradient_statistic_noise whose simulated_spread is `spread` (bisection over [0, 5]; 5
/// when even that is too quiet).
double noise_for_spread(double spread, int global_batch, int workers, int iterations,
                        double noise_scale_estimate_ratio = 1.0);

struct BatchSpread {
  int global_batch = 0;
  /// Windows at this batch compared with their trend.
  std::size_t windows = 0;
  /// Share of them whose B_simple was <= 0 or past infinity.
  double non_positive_fraction = 0;
  /// Median iterations per window, and workers B/b (rounded).
  int iterations = 0;
  int workers = 0;
  /// The real estimate's spread; nullopt when too many windows were beyond zero to tell.
  std::optional<double> real_spread;
  /// The gradient_statistic_noise, one σ at every batch, that gives the simulated estimate
  /// real_spread.
  std::optional<double> implied_noise;
  /// The σ the fitted noise draws at this batch's per-worker batch.
  std::optional<double> fitted_noise;
  /// The simulated spread with the fitted noise.
  std::optional<double> simulated_spread;
  /// The simulated spread with the best noise that is one σ at every batch.
  std::optional<double> constant_simulated_spread;
};

struct EstimatorNoiseFit {
  /// In increasing global batch.
  std::vector<BatchSpread> batches;
  /// The fitted gradient_statistic_noise: the sampling part at noise_samples when that is set,
  /// else one σ at every batch; nullopt when no batch had a spread.
  std::optional<double> noise;
  /// The fitted gradient_statistic_noise_samples n_ref (the smallest per-worker batch with a
  /// spread) and _floor; set when two or more per-worker batches had a spread.
  std::optional<double> noise_samples;
  double noise_floor = 0;
  /// Root mean square of log(simulated / real spread) over the batches with both.
  std::optional<double> rms_log_error;
  /// The best σ at every batch — the geometric mean of the implied noises over the batches
  /// (each batch counts once, however many windows it logged) — and its rms log error.
  std::optional<double> constant_noise;
  std::optional<double> constant_rms_log_error;
};

/// Measures every run's per-window spread and fits the simulator's noise to it: one σ at every
/// batch, and where the runs had two or more per-worker batches σ(b) = sqrt(floor² + σ²·n_ref/b)
/// (docs/calibration.md), whose fit is never worse than the single σ's. The simulated spreads are
/// those of statistics drawn around κ·B_noise, κ the workload's noise_scale_estimate_ratio (the
/// dynamics fit's).
EstimatorNoiseFit fit_estimator_noise(const RunsFile& runs,
                                      double noise_scale_estimate_ratio = 1.0);

/// Sets the three gradient-statistics noise keys of `model` to the fit's (nothing without one).
void apply_estimator_noise(const EstimatorNoiseFit& fit, StatisticalModel& model);

}  // namespace dynamix
