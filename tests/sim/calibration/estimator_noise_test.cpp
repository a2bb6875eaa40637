// The estimator's noise: a robust log spread that counts estimates beyond zero, the real spread
// measured per global batch, and a gradient_statistic_noise whose simulated estimate is as noisy.
#include "sim/calibration/estimator_noise.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "sim/core/random.h"
#include "sim/training/dynamics.h"
#include "tests/fixtures.h"
#include "tests/sim/calibration/synthetic_runs.h"

namespace dynamix {
namespace {

TEST_CASE("The log spread is σ for normal logs and counts estimates beyond zero as tails") {
  Rng rng(3, 0);
  std::vector<double> logs;
  logs.reserve(4000);
  for (int i = 0; i < 4000; ++i) logs.push_back(0.3 * rng.normal());
  CHECK(*log_spread(logs) == doctest::Approx(0.3).epsilon(0.05));
  const double infinity = std::numeric_limits<double>::infinity();
  std::vector<double> some_beyond = logs;
  for (int i = 0; i < 200; ++i)
    some_beyond[static_cast<std::size_t>(i)] = i % 2 ? infinity : -infinity;
  CHECK(*log_spread(some_beyond) > *log_spread(logs));
  std::vector<double> many_beyond = logs;
  for (int i = 0; i < 800; ++i) many_beyond[static_cast<std::size_t>(i)] = -infinity;
  CHECK_FALSE(log_spread(many_beyond).has_value());
  CHECK_FALSE(log_spread({0.1, -0.1}).has_value());
}

TEST_CASE(
    "Each window is compared with its neighbours' pooled estimate; one beyond zero is a tail") {
  std::vector<NoiseScaleParts> parts(9, {.gradient_sq = 1, .trace_covariance = 100});
  parts[2].trace_covariance = -50;
  parts[6].gradient_sq = -0.5;
  const auto ratios = log_ratios_to_trend(parts);
  CHECK(std::isinf(*ratios[2]));
  CHECK(*ratios[2] < 0);
  CHECK(std::isinf(*ratios[6]));
  CHECK(*ratios[6] > 0);
  REQUIRE(ratios[0].has_value());
  CHECK(*ratios[0] == doctest::Approx(std::log(100.0 / (350.0 / 5.0))));
}

TEST_CASE("The fitted noise gives the simulator's per-window estimate the real spread") {
  const testing::TempDirectory dir;
  const testing::SyntheticJob job{.workers = 4, .iterations_per_window = 5, .estimate_spread = 0.2};
  std::vector<testing::SyntheticRun> runs{{.label = "a", .global_batch = 128, .windows = 300},
                                          {.label = "b", .global_batch = 512, .windows = 300}};
  const RunsFile file = read_runs(
      dir.write("runs.csv", testing::synthetic_runs_csv(testing::synthetic_workload(), runs, job)));
  const EstimatorNoiseFit fit = fit_estimator_noise(file);
  REQUIRE(fit.batches.size() == 2);
  REQUIRE(fit.noise.has_value());
  MESSAGE("noise " << *fit.noise << ", rms log error " << *fit.rms_log_error);
  for (const BatchSpread& batch : fit.batches) {
    MESSAGE("batch " << batch.global_batch << ": real " << batch.real_spread.value_or(-1)
                     << ", implied " << batch.implied_noise.value_or(-1) << ", simulated "
                     << batch.simulated_spread.value_or(-1));
    CHECK(batch.workers == 4);
    CHECK(batch.iterations == 5);
    CHECK(batch.non_positive_fraction == 0);
    // The trend is pooled from the window and its 8 neighbours: a little of the spread goes.
    CHECK(*batch.real_spread == doctest::Approx(0.2).epsilon(0.15));
  }
  // Independently of the fit's own procedure: the simulator's per-window estimate, as
  // measured_noise_scale forms it, against the true B_noise.
  Workload workload = testing::synthetic_workload();
  workload.statistics.gradient_statistic_noise = *fit.noise;
  workload.statistics.reference_epochs = 1e6;
  TrainingDynamics dynamics(workload, {}, 4, 99);
  const std::vector<int> batches(4, 32);
  std::vector<double> std_norm(4), var_norm(4), logs;
  for (int w = 0; w < 2000; ++w) {
    double estimate = 0, noise_scale = 0;
    for (int t = 0; t < 5; ++t) {
      noise_scale += dynamics.step(batches, std_norm, var_norm).noise_scale / 5;
      for (const double var : var_norm) estimate += var * 32 / 5 / 4;
    }
    logs.push_back(std::log(estimate / noise_scale));
  }
  CHECK(*log_spread(logs) == doctest::Approx(0.2).epsilon(0.15));
}

TEST_CASE(
    "A spread that shrinks with the per-worker batch is fitted as sqrt(floor² + σ²·n_ref/b)") {
  const testing::TempDirectory dir;
  const testing::SyntheticJob job{.workers = 4,
                                  .iterations_per_window = 5,
                                  .estimate_spread = 0.6,
                                  .estimate_spread_samples = 32,
                                  .estimate_spread_floor = 0.15};
  std::vector<testing::SyntheticRun> runs{{.label = "a", .global_batch = 128, .windows = 400},
                                          {.label = "b", .global_batch = 512, .windows = 400},
                                          {.label = "c", .global_batch = 2048, .windows = 400}};
  const RunsFile file = read_runs(
      dir.write("runs.csv", testing::synthetic_runs_csv(testing::synthetic_workload(), runs, job)));
  const EstimatorNoiseFit fit = fit_estimator_noise(file);
  REQUIRE(fit.noise.has_value());
  REQUIRE(fit.noise_samples.has_value());
  MESSAGE("noise " << *fit.noise << " at " << *fit.noise_samples << ", floor " << fit.noise_floor
                   << ", rms log error " << *fit.rms_log_error << " (one σ: " << *fit.constant_noise
                   << ", " << *fit.constant_rms_log_error << ")");
  CHECK(*fit.noise_samples == 32);
  // The simulator draws per iteration and worker, the runs per window: the shapes differ a little.
  CHECK(*fit.rms_log_error < 0.08);
  CHECK(*fit.constant_rms_log_error > 0.3);
  REQUIRE(fit.batches.size() == 3);
  for (const BatchSpread& batch : fit.batches) {
    CAPTURE(batch.global_batch);
    MESSAGE("batch " << batch.global_batch << ": real " << batch.real_spread.value_or(-1)
                     << ", fitted σ " << batch.fitted_noise.value_or(-1) << ", simulated "
                     << batch.simulated_spread.value_or(-1) << ", one σ "
                     << batch.constant_simulated_spread.value_or(-1));
    const double truth = testing::estimate_spread_at(job, batch.global_batch / 4);
    CHECK(*batch.real_spread == doctest::Approx(truth).epsilon(0.15));
    CHECK(*batch.simulated_spread == doctest::Approx(*batch.real_spread).epsilon(0.1));
  }
  // Independently: the simulator with the fitted keys, its per-window estimate against B_noise.
  Workload workload = testing::synthetic_workload();
  EstimatorNoiseFit applied = fit;
  apply_estimator_noise(applied, workload.statistics);
  workload.statistics.reference_epochs = 1e6;
  for (const int local : {32, 512}) {
    TrainingDynamics dynamics(workload, {}, 4, 99);
    const std::vector<int> batches(4, local);
    std::vector<double> std_norm(4), var_norm(4), logs;
    for (int w = 0; w < 2000; ++w) {
      double estimate = 0, noise_scale = 0;
      for (int t = 0; t < 5; ++t) {
        noise_scale += dynamics.step(batches, std_norm, var_norm).noise_scale / 5;
        for (const double var : var_norm) estimate += var * local / 5 / 4;
      }
      logs.push_back(std::log(estimate / noise_scale));
    }
    CAPTURE(local);
    CHECK(*log_spread(logs) ==
          doctest::Approx(testing::estimate_spread_at(job, local)).epsilon(0.2));
  }
}

}  // namespace
}  // namespace dynamix
