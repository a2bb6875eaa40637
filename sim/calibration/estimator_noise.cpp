// The spread of the per-window noise-scale estimate, real and simulated.
#include "sim/calibration/estimator_noise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "sim/calibration/nelder_mead.h"
#include "sim/training/dynamics.h"

namespace dynamix {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kMaxNoise = 5.0;
constexpr int kSimulatedWindows = 600;
constexpr int kBisections = 30;
constexpr std::uint64_t kEstimatorSeed = 25;
constexpr double kHuge = 1e30;
// The grid the batch-dependent search starts from: σ and floor in steps of 0.5.
constexpr int kNoiseGridSteps = 10;
constexpr int kFloorGridSteps = 6;
constexpr double kGridStep = 0.5;
constexpr int kNoiseSearchEvaluations = 80;

/// The p-quantile of sorted values, interpolated; infinite where a neighbour is.
double quantile(const std::vector<double>& sorted, double p) {
  const double position = p * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double low = sorted[below];
  const double high = sorted[above];
  if (std::isinf(low) || std::isinf(high)) return std::isinf(low) ? low : high;
  return low + (position - static_cast<double>(below)) * (high - low);
}

int median(std::vector<int> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// One global batch's windows: their log ratios, how many were beyond zero, their shapes.
struct BatchWindows {
  std::vector<double> log_ratios;
  std::size_t beyond = 0;
  std::vector<int> iterations;
  std::vector<int> workers;
};

void collect_run(const RunLog& run, std::map<int, BatchWindows>& batches) {
  std::vector<NoiseScaleParts> parts;
  std::vector<std::size_t> measured;
  for (std::size_t w = 0; w < run.windows.size(); ++w) {
    if (const auto part = noise_scale_parts(run.windows[w])) {
      parts.push_back(*part);
      measured.push_back(w);
    }
  }
  const std::vector<std::optional<double>> ratios = log_ratios_to_trend(parts);
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    if (!ratios[i]) continue;
    const std::size_t w = measured[i];
    const RunWindow& window = run.windows[w];
    BatchWindows& batch = batches[window.global_batch];
    batch.log_ratios.push_back(*ratios[i]);
    if (std::isinf(*ratios[i])) ++batch.beyond;
    const std::int64_t before = w == 0 ? 0 : run.windows[w - 1].iteration;
    batch.iterations.push_back(static_cast<int>(
        std::min<std::int64_t>(window.iteration - before, std::numeric_limits<int>::max())));
    batch.workers.push_back(static_cast<int>(
        std::lround(static_cast<double>(window.global_batch) / window.local_batch)));
  }
}

BatchSpread measure_batch(int global_batch, const BatchWindows& windows, double estimate_ratio) {
  BatchSpread spread;
  spread.global_batch = global_batch;
  spread.windows = windows.log_ratios.size();
  spread.non_positive_fraction =
      static_cast<double>(windows.beyond) / static_cast<double>(spread.windows);
  spread.iterations = median(windows.iterations);
  spread.workers = std::max(2, median(windows.workers));
  spread.real_spread = log_spread(windows.log_ratios);
  if (spread.real_spread) {
    spread.implied_noise = noise_for_spread(*spread.real_spread, global_batch, spread.workers,
                                            spread.iterations, estimate_ratio);
  }
  return spread;
}

StatisticalModel noise_model(double noise, std::optional<double> samples, double floor,
                             double estimate_ratio) {
  StatisticalModel model;
  model.noise_scale_estimate_ratio = estimate_ratio;
  model.gradient_statistic_noise = noise;
  model.gradient_statistic_noise_samples = samples;
  model.gradient_statistic_noise_floor = floor;
  return model;
}

/// Root mean square of log(simulated / real spread) over the batches with a real spread.
double spread_error(const std::vector<BatchSpread>& batches, const StatisticalModel& noise) {
  double squares = 0;
  int compared = 0;
  for (const BatchSpread& batch : batches) {
    if (!batch.real_spread) continue;
    const double simulated =
        simulated_spread(noise, batch.global_batch, batch.workers, batch.iterations);
    squares += std::pow(std::log(simulated / *batch.real_spread), 2);
    ++compared;
  }
  const double error = std::sqrt(squares / compared);
  return std::isfinite(error) ? error : kHuge;
}

/// The smallest per-worker batch with a spread, when two or more distinct ones have one: only
/// then can the spread's dependence on the batch be told from its level.
std::optional<double> reference_batch(const std::vector<BatchSpread>& batches) {
  std::vector<int> per_worker;
  for (const BatchSpread& batch : batches) {
    if (batch.real_spread) per_worker.push_back(std::max(1, batch.global_batch / batch.workers));
  }
  std::sort(per_worker.begin(), per_worker.end());
  if (per_worker.empty() || per_worker.front() == per_worker.back()) return std::nullopt;
  return per_worker.front();
}

/// σ and floor of sqrt(floor² + σ²·n_ref/b) that reproduce the spreads best: a grid, the single
/// σ among its starts, then Nelder–Mead. Keeps the single σ when the sampling part comes out 0.
StatisticalModel fit_batch_dependence(const std::vector<BatchSpread>& batches,
                                      const StatisticalModel& constant, double reference) {
  const auto model = [&](std::span<const double> x) {
    return noise_model(std::min(kMaxNoise, std::abs(x[0])), reference,
                       std::min(kMaxNoise, std::abs(x[1])), constant.noise_scale_estimate_ratio);
  };
  const auto error = [&](std::span<const double> x) { return spread_error(batches, model(x)); };
  std::vector<double> best{0.0, constant.gradient_statistic_noise};
  double best_error = error(best);
  for (int i = 1; i <= kNoiseGridSteps; ++i) {
    for (int j = 0; j <= kFloorGridSteps; ++j) {
      const std::vector<double> x{i * kGridStep, j * kGridStep};
      const double value = error(x);
      if (value < best_error) std::tie(best, best_error) = std::pair{x, value};
    }
  }
  const NelderMeadResult result = nelder_mead(
      error, best,
      {.step = 0.25 * kGridStep, .max_evaluations = kNoiseSearchEvaluations, .tolerance = 1e-6});
  const StatisticalModel fitted = model(result.value < best_error ? result.x : best);
  return fitted.gradient_statistic_noise > 0 ? fitted : constant;
}

/// The fitted keys into `fit`.
void apply_estimator_noise_model(const StatisticalModel& noise, EstimatorNoiseFit& fit) {
  fit.noise = noise.gradient_statistic_noise;
  fit.noise_samples = noise.gradient_statistic_noise_samples;
  fit.noise_floor = noise.gradient_statistic_noise_floor;
}

}  // namespace

std::optional<double> log_spread(std::vector<double> log_ratios) {
  if (log_ratios.size() < kMinSpreadWindows) return std::nullopt;
  std::sort(log_ratios.begin(), log_ratios.end());
  constexpr double kLow = 0.158655;  // Φ(-1)
  const double low = quantile(log_ratios, kLow);
  const double high = quantile(log_ratios, 1.0 - kLow);
  if (std::isinf(low) || std::isinf(high)) return std::nullopt;
  return 0.5 * (high - low);
}

std::vector<std::optional<double>> log_ratios_to_trend(std::span<const NoiseScaleParts> parts) {
  std::vector<std::optional<double>> ratios(parts.size());
  const auto count = static_cast<std::ptrdiff_t>(parts.size());
  for (std::ptrdiff_t w = 0; w < count; ++w) {
    const std::ptrdiff_t first = std::max<std::ptrdiff_t>(0, w - kTrendHalfWidth);
    const std::ptrdiff_t last = std::min<std::ptrdiff_t>(count, w + kTrendHalfWidth + 1);
    const std::optional<double> trend = pooled_noise_scale(
        parts.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(last - first)));
    if (!trend) continue;
    const NoiseScaleParts& part = parts[static_cast<std::size_t>(w)];
    if (part.trace_covariance <= 0) {
      ratios[static_cast<std::size_t>(w)] = -kInfinity;
    } else if (part.gradient_sq <= 0) {
      ratios[static_cast<std::size_t>(w)] = kInfinity;
    } else {
      ratios[static_cast<std::size_t>(w)] =
          std::log(part.trace_covariance / part.gradient_sq / *trend);
    }
  }
  return ratios;
}

double simulated_spread(const StatisticalModel& noise, int global_batch, int workers,
                        int iterations) {
  Workload workload;
  workload.name = "estimator";
  workload.dataset_size = std::int64_t{1} << 40;
  workload.statistics.gradient_statistic_noise = noise.gradient_statistic_noise;
  workload.statistics.gradient_statistic_noise_samples = noise.gradient_statistic_noise_samples;
  workload.statistics.gradient_statistic_noise_floor = noise.gradient_statistic_noise_floor;
  workload.statistics.noise_scale_estimate_ratio = noise.noise_scale_estimate_ratio;
  const auto p = static_cast<std::size_t>(workers);
  TrainingDynamics dynamics(workload, TrainingOptions{}, p, kEstimatorSeed);
  const std::vector<int> batches(p, std::max(1, global_batch / workers));
  std::vector<double> std_norm(p), var_norm(p);
  std::vector<NoiseScaleParts> parts;
  parts.reserve(kSimulatedWindows);
  for (int w = 0; w < kSimulatedWindows; ++w) {
    std::vector<double> var_sum(p, 0.0);
    double noise_scale = 0;
    for (int t = 0; t < iterations; ++t) {
      noise_scale += dynamics.step(batches, std_norm, var_norm).noise_scale;
      for (std::size_t i = 0; i < p; ++i) var_sum[i] += var_norm[i];
    }
    double estimate = 0;
    for (std::size_t i = 0; i < p; ++i) estimate += var_sum[i] / iterations * batches[i];
    parts.push_back(
        {.gradient_sq = noise_scale / iterations, .trace_covariance = estimate / workers});
  }
  std::vector<double> logs;
  for (const std::optional<double>& ratio : log_ratios_to_trend(parts)) {
    if (ratio) logs.push_back(*ratio);
  }
  return log_spread(std::move(logs)).value_or(kInfinity);
}

double simulated_spread(double gradient_statistic_noise, int global_batch, int workers,
                        int iterations, double noise_scale_estimate_ratio) {
  StatisticalModel noise;
  noise.gradient_statistic_noise = gradient_statistic_noise;
  noise.noise_scale_estimate_ratio = noise_scale_estimate_ratio;
  return simulated_spread(noise, global_batch, workers, iterations);
}

double noise_for_spread(double spread, int global_batch, int workers, int iterations,
                        double noise_scale_estimate_ratio) {
  const auto simulated = [&](double noise) {
    return simulated_spread(noise, global_batch, workers, iterations, noise_scale_estimate_ratio);
  };
  if (simulated(kMaxNoise) <= spread) return kMaxNoise;
  double low = 0;
  double high = kMaxNoise;
  for (int i = 0; i < kBisections; ++i) {
    const double middle = 0.5 * (low + high);
    (simulated(middle) < spread ? low : high) = middle;
  }
  return 0.5 * (low + high);
}

EstimatorNoiseFit fit_estimator_noise(const RunsFile& runs, double noise_scale_estimate_ratio) {
  std::map<int, BatchWindows> windows;
  for (const RunLog& run : runs.runs) collect_run(run, windows);
  EstimatorNoiseFit fit;
  double log_sum = 0;
  double weight = 0;
  for (const auto& [batch, measured] : windows) {
    fit.batches.push_back(measure_batch(batch, measured, noise_scale_estimate_ratio));
    const BatchSpread& spread = fit.batches.back();
    if (!spread.implied_noise) continue;
    log_sum += std::log(std::max(1e-6, *spread.implied_noise));
    weight += 1;
  }
  if (weight == 0) return fit;
  const StatisticalModel constant =
      noise_model(std::exp(log_sum / weight), std::nullopt, 0, noise_scale_estimate_ratio);
  fit.constant_noise = constant.gradient_statistic_noise;
  fit.constant_rms_log_error = spread_error(fit.batches, constant);
  StatisticalModel fitted = constant;
  fit.rms_log_error = fit.constant_rms_log_error;
  if (const std::optional<double> reference = reference_batch(fit.batches)) {
    fitted = fit_batch_dependence(fit.batches, constant, *reference);
    fit.rms_log_error = spread_error(fit.batches, fitted);
  }
  apply_estimator_noise_model(fitted, fit);
  for (BatchSpread& spread : fit.batches) {
    const double per_worker = std::max(1, spread.global_batch / spread.workers);
    spread.fitted_noise = gradient_statistic_noise_at(fitted, per_worker);
    spread.simulated_spread =
        simulated_spread(fitted, spread.global_batch, spread.workers, spread.iterations);
    spread.constant_simulated_spread =
        simulated_spread(constant, spread.global_batch, spread.workers, spread.iterations);
  }
  return fit;
}

void apply_estimator_noise(const EstimatorNoiseFit& fit, StatisticalModel& model) {
  if (!fit.noise) return;
  model.gradient_statistic_noise = *fit.noise;
  model.gradient_statistic_noise_samples = fit.noise_samples;
  model.gradient_statistic_noise_floor = fit.noise_floor;
}

}  // namespace dynamix
