// How noisy the per-window gradient-noise-scale estimate is: a real job's B_simple around its
// trend, per global batch, and the gradient_statistic_noise that gives the simulator's estimate
// (gym/window_metrics.h measured_noise_scale) the same spread.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "sim/calibration/training_runs.h"

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
/// with this gradient_statistic_noise. Deterministic.
double simulated_spread(double gradient_statistic_noise, int global_batch, int workers,
                        int iterations);

/// The gradient_statistic_noise whose simulated_spread is `spread` (bisection over [0, 5]; 5
/// when even that is too quiet).
double noise_for_spread(double spread, int global_batch, int workers, int iterations);

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
  /// The gradient_statistic_noise that gives the simulated estimate real_spread.
  std::optional<double> implied_noise;
  /// The simulated spread with the fitted noise.
  std::optional<double> simulated_spread;
};

struct EstimatorNoiseFit {
  /// In increasing global batch.
  std::vector<BatchSpread> batches;
  /// The geometric mean of the implied noises over the batches (each batch counts once,
  /// however many windows it logged); nullopt when no batch had a spread.
  std::optional<double> noise;
  /// Root mean square of log(simulated / real spread) over the batches with both.
  std::optional<double> rms_log_error;
};

/// Measures every run's per-window spread and fits the simulator's noise to it.
EstimatorNoiseFit fit_estimator_noise(const RunsFile& runs);

}  // namespace dynamix
