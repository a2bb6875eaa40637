// The statistical fit: parameters come back from runs the simulator generated, held-out runs are
// predicted, the LR rule and the fitted runs are chosen as documented, and the workload written
// reads back as a catalog entry.
#include "sim/calibration/dynamics_fit.h"

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/calibration/estimator_noise.h"
#include "sim/calibration/fitted_workload.h"
#include "tests/fixtures.h"
#include "tests/sim/calibration/synthetic_runs.h"

namespace dynamix {
namespace {

using testing::SyntheticJob;
using testing::SyntheticRun;

/// Runs at five global batches, each about 8 epochs of the synthetic workload.
std::vector<SyntheticRun> five_batches() {
  std::vector<SyntheticRun> runs;
  for (const int batch : {64, 128, 256, 512, 1024}) {
    runs.push_back({.label = "static-" + std::to_string(batch),
                    .global_batch = batch,
                    .windows = 160000 / (batch * 10)});
  }
  return runs;
}

struct Fixture {
  testing::TempDirectory dir;
  Workload truth = testing::synthetic_workload();
  RunsFile runs;
  explicit Fixture(const SyntheticJob& job = {}) {
    runs =
        read_runs(dir.write("runs.csv", testing::synthetic_runs_csv(truth, five_batches(), job)));
  }
};

TEST_CASE("The statistical fit recovers the parameters the runs were generated with") {
  const Fixture fixture;
  Workload start = fixture.truth;
  StatisticalModel& s = start.statistics;
  s.reference_epochs *= 3;
  s.final_accuracy = 0.7;
  s.initial_noise_scale = 1000;
  s.final_noise_scale = 5000;
  const DynamicsFit fit = fit_dynamics(fixture.runs, start, {});
  const StatisticalModel& got = fit.workload.statistics;
  const StatisticalModel& want = fixture.truth.statistics;
  MESSAGE("reference_epochs " << got.reference_epochs << " convergence "
                              << got.convergence_exponent.value_or(0) << ", "
                              << got.convergence_knee.value_or(0) << " final_accuracy "
                              << got.final_accuracy << " loss " << got.initial_loss << " -> "
                              << got.final_loss << " noise scale " << got.initial_noise_scale
                              << " -> " << got.final_noise_scale << " (" << fit.evaluations
                              << " evaluations, objective " << fit.objective << ")");
  CHECK(fit.lr_rule == LrRule::kLinear);
  // With the convergence shape fitted too, the end of progress is pinned only by the last few
  // epochs' flat tail: the knee in epochs (reference_epochs·p0) comes back within 6%.
  CHECK(got.reference_epochs == doctest::Approx(want.reference_epochs).epsilon(0.1));
  CHECK(got.convergence_exponent.value() == doctest::Approx(0.7).epsilon(0.05));
  CHECK(got.convergence_knee.value() == doctest::Approx(0.002).epsilon(0.05));
  CHECK(got.final_accuracy == doctest::Approx(want.final_accuracy).epsilon(0.005));
  CHECK(got.initial_loss == doctest::Approx(want.initial_loss).epsilon(0.05));
  CHECK(got.final_loss == doctest::Approx(want.final_loss).epsilon(0.02));
  // The start of the noise scale's path is seen only in the first few windows.
  CHECK(got.initial_noise_scale == doctest::Approx(want.initial_noise_scale).epsilon(0.2));
  CHECK(got.final_noise_scale == doctest::Approx(want.final_noise_scale).epsilon(0.05));
  REQUIRE(fit.runs.size() == 5);
  for (const RunResidual& run : fit.runs) {
    MESSAGE(run.label << std::string(run.fitted ? " fitted" : " held out") << ": accuracy RMSE "
                      << run.accuracy_rmse << ", loss " << run.loss_rms_log_error << ", B_simple "
                      << run.noise_scale_rms_log_error.value_or(-1) << ", samples to target "
                      << run.measured_samples.value_or(-1) << " measured, "
                      << run.predicted_samples.value_or(-1) << " predicted");
    CHECK(run.fitted == (run.first_batch == 64 || run.first_batch == 1024));
    // Validation noise is sqrt(a(1 - a)/20000), 0.3 points at the target.
    CHECK(run.accuracy_rmse < 0.005);
    REQUIRE(run.measured_samples.has_value());
    REQUIRE(run.predicted_samples.has_value());
    // Time to target is read at validations: noise can move it by one validation, no more.
    const double validation_samples = 2.0 * 10 * run.first_batch;
    CHECK(std::abs(*run.predicted_samples - *run.measured_samples) <= validation_samples);
    const auto samples = relative_error(run.predicted_samples, run.measured_samples);
    const auto time = relative_error(run.predicted_time_s, run.measured_time_s);
    REQUIRE(time.has_value());
    CHECK(*time == doctest::Approx(*samples));
  }
}

TEST_CASE("The fit recovers a convergence shape other than the shared one") {
  testing::TempDirectory dir;
  Workload truth = testing::synthetic_workload();
  truth.statistics.convergence_exponent = 0.4;
  truth.statistics.convergence_knee = 0.0005;
  const RunsFile runs =
      read_runs(dir.write("runs.csv", testing::synthetic_runs_csv(truth, five_batches(), {})));
  Workload start = testing::synthetic_workload();
  start.statistics.reference_epochs *= 2;
  const DynamicsFit fit = fit_dynamics(runs, start, {});
  const StatisticalModel& got = fit.workload.statistics;
  MESSAGE("convergence_exponent " << got.convergence_exponent.value_or(0) << " knee "
                                  << got.convergence_knee.value_or(0) << " reference_epochs "
                                  << got.reference_epochs << " final_accuracy "
                                  << got.final_accuracy << " loss " << got.initial_loss << " -> "
                                  << got.final_loss << " (objective " << fit.objective << ")");
  CHECK(got.convergence_exponent.value() == doctest::Approx(0.4).epsilon(0.1));
  CHECK(got.convergence_knee.value() == doctest::Approx(0.0005).epsilon(0.2));
  CHECK(got.reference_epochs == doctest::Approx(5).epsilon(0.1));
  CHECK(got.final_accuracy == doctest::Approx(0.85).epsilon(0.005));
  CHECK(got.initial_loss == doctest::Approx(2.3).epsilon(0.05));
  for (const RunResidual& run : fit.runs) {
    CAPTURE(run.label);
    CHECK(run.accuracy_rmse < 0.005);
    REQUIRE(run.measured_samples.has_value());
    REQUIRE(run.predicted_samples.has_value());
    CHECK(std::abs(*run.predicted_samples - *run.measured_samples) <= 2.0 * 10 * run.first_batch);
  }
}

TEST_CASE("The fit recovers a plateau term the runs were generated with") {
  testing::TempDirectory dir;
  // As on the reference job: a fast power law, then a slow approach to the final accuracy.
  Workload truth = testing::synthetic_workload();
  truth.statistics.convergence_exponent = 1.5;
  truth.statistics.convergence_knee = 0.002;
  truth.statistics.plateau_share = 0.3;
  truth.statistics.plateau_progress = 0.3;
  const RunsFile runs =
      read_runs(dir.write("runs.csv", testing::synthetic_runs_csv(truth, five_batches(), {})));
  Workload start = testing::synthetic_workload();
  start.statistics.reference_epochs *= 2;
  const DynamicsFitOptions options{.target_accuracy = 0.78, .fit_plateau = true};
  const DynamicsFit fit = fit_dynamics(runs, start, options);
  const StatisticalModel& got = fit.workload.statistics;
  MESSAGE("plateau_share " << got.plateau_share << " plateau_progress "
                           << got.plateau_progress.value_or(0) << " convergence_exponent "
                           << got.convergence_exponent.value_or(0) << " knee "
                           << got.convergence_knee.value_or(0) << " reference_epochs "
                           << got.reference_epochs << " final_accuracy " << got.final_accuracy
                           << " (objective " << fit.objective << ")");
  CHECK(fit.plateau_fitted);
  CHECK(got.plateau_share == doctest::Approx(0.3).epsilon(0.1));
  CHECK(got.plateau_progress.value() == doctest::Approx(0.3).epsilon(0.1));
  CHECK(got.final_accuracy == doctest::Approx(0.85).epsilon(0.005));
  int reached = 0;
  for (const RunResidual& run : fit.runs) {
    CAPTURE(run.label);
    CHECK(run.accuracy_rmse < 0.006);
    if (!run.measured_samples) continue;  // the largest batch's 8 epochs end before 0.78
    ++reached;
    REQUIRE(run.predicted_samples.has_value());
    CHECK(std::abs(*run.predicted_samples - *run.measured_samples) <= 2.0 * 10 * run.first_batch);
  }
  CHECK(reached >= 4);
  // One power law cannot follow the plateau: its fit is worse, and held at the base's none.
  const DynamicsFit without = fit_dynamics(runs, start, {.target_accuracy = 0.78});
  MESSAGE("without the plateau term: objective " << without.objective);
  CHECK_FALSE(without.plateau_fitted);
  CHECK(without.workload.statistics.plateau_share == 0);
  CHECK(without.objective > 1.5 * fit.objective);
}

TEST_CASE("With a biased B_simple the curves set the noise scale's level and B_simple fits κ") {
  const Fixture fixture({.estimate_ratio = 0.25});
  Workload start = fixture.truth;
  start.statistics.reference_epochs *= 3;
  start.statistics.final_accuracy = 0.7;
  const StatisticalModel& want = fixture.truth.statistics;
  const DynamicsFit fit = fit_dynamics(fixture.runs, start, {});
  const StatisticalModel& got = fit.workload.statistics;
  MESSAGE("noise scale " << got.initial_noise_scale << " -> " << got.final_noise_scale
                         << ", noise_scale_estimate_ratio " << got.noise_scale_estimate_ratio
                         << " (objective " << fit.objective << ")");
  CHECK(fit.estimate_ratio_fitted);
  CHECK(got.noise_scale_estimate_ratio == doctest::Approx(0.25).epsilon(0.15));
  CHECK(got.final_noise_scale == doctest::Approx(want.final_noise_scale).epsilon(0.15));
  CHECK(got.initial_noise_scale == doctest::Approx(want.initial_noise_scale).epsilon(0.3));
  for (const RunResidual& run : fit.runs) {
    CAPTURE(run.label);
    CHECK(run.accuracy_rmse < 0.005);
    CHECK(run.noise_scale_rms_log_error.value() < 0.3);
    REQUIRE(run.measured_samples.has_value());
    REQUIRE(run.predicted_samples.has_value());
    CHECK(std::abs(*run.predicted_samples - *run.measured_samples) <= 2.0 * 10 * run.first_batch);
  }
  // Held at 1, B_simple drags the noise scale toward κ·φ, and the B_simple term pays for it.
  const DynamicsFit unbiased =
      fit_dynamics(fixture.runs, start, {.noise_scale_estimate_ratio = 1.0});
  MESSAGE("held at 1: noise scale " << unbiased.workload.statistics.initial_noise_scale << " -> "
                                    << unbiased.workload.statistics.final_noise_scale
                                    << " (objective " << unbiased.objective << ")");
  CHECK_FALSE(unbiased.estimate_ratio_fitted);
  CHECK(unbiased.workload.statistics.noise_scale_estimate_ratio == 1.0);
  CHECK(unbiased.workload.statistics.final_noise_scale < 0.8 * want.final_noise_scale);
  CHECK(unbiased.objective > 1.3 * fit.objective);
}

TEST_CASE(
    "By default the runs at the smallest and largest first batch are fitted, the rest held out") {
  const Fixture fixture;
  const std::vector<bool> chosen = choose_fitted_runs(fixture.runs, {});
  CHECK(chosen == std::vector<bool>{true, false, false, false, true});
  CHECK(choose_fitted_runs(fixture.runs, {.fit_runs = {"static-256"}}) ==
        std::vector<bool>{false, false, true, false, false});
  CHECK(choose_fitted_runs(fixture.runs, {.fit_batches = {128, 512}}) ==
        std::vector<bool>{false, true, false, true, false});
  CHECK(testing::error_of([&] {
          choose_fitted_runs(fixture.runs, {.fit_runs = {"static-99"}});
        }).starts_with("--dynamics-fit-runs: expected runs of "));
  CHECK(testing::error_of([&] { choose_fitted_runs(fixture.runs, {.fit_batches = {99}}); }) ==
        "--dynamics-fit-batches: expected a global batch some run starts at (64, 128, 256, 512, "
        "1024), found none of them");
}

TEST_CASE("The LR rule is read from lr_factor; a factor no rule explains names its line") {
  const testing::TempDirectory dir;
  const std::string header = std::string(kRunsHeader) + "\n";
  const auto runs = [&](const std::string& lr) {
    return read_runs(
        dir.write("lr.csv", header + "a,0,10,2560,1,256,64," + lr + ",2.0,0.5,2,1.5\n"));
  };
  CHECK(infer_lr_rule(runs("4"), 64) == LrRule::kLinear);
  CHECK(infer_lr_rule(runs("2"), 64) == LrRule::kSqrt);
  CHECK(infer_lr_rule(runs("1"), 64) == LrRule::kNone);
  CHECK(testing::error_of([&] { infer_lr_rule(runs("3"), 64); }) ==
        dir / "lr.csv" +
            ":2: lr_factor: expected the linear, square-root or no LR rule of global_batch / 64 "
            "(the workload's reference_batch) within 5%, found 3.000000");
}

TEST_CASE("A fitted plateau term is written with its residual and reads back") {
  const Fixture fixture;
  const DynamicsFit fit =
      fit_dynamics(fixture.runs, fixture.truth, {.fit_plateau = true, .max_evaluations = 60});
  const StatisticalModel& m = fit.workload.statistics;
  REQUIRE(m.plateau_share > 0);
  const std::string yaml =
      fitted_workload_yaml(fit, {}, fixture.runs, "synthetic", CatalogLayout::kList);
  CAPTURE(yaml);
  for (const char* key : {"plateau_share", "plateau_progress"}) {
    const auto line = yaml.find(std::string("    ") + key + ": ");
    REQUIRE(line != std::string::npos);
    CHECK(yaml.substr(line, yaml.find('\n', line) - line).find("# fitted: runs.csv, residual: ") !=
          std::string::npos);
  }
  const Workload loaded =
      WorkloadCatalog::load(fixture.dir.write("workload.yaml", yaml)).at("synthetic");
  CHECK(loaded.statistics.plateau_share == doctest::Approx(m.plateau_share).epsilon(1e-5));
  CHECK(loaded.statistics.plateau_progress.value() ==
        doctest::Approx(m.plateau_progress.value()).epsilon(1e-5));
}

TEST_CASE("The fitted workload reads back as a catalog entry with each fitted number's residual") {
  const Fixture fixture;
  const DynamicsFit fit = fit_dynamics(fixture.runs, fixture.truth, {.max_evaluations = 60});
  EstimatorNoiseFit noise;
  noise.noise = 0.3;
  noise.rms_log_error = 0.01;
  DynamicsFit with_noise = fit;
  with_noise.workload.statistics.gradient_statistic_noise = 0.3;
  for (const CatalogLayout layout : {CatalogLayout::kList, CatalogLayout::kMap}) {
    const std::string yaml =
        fitted_workload_yaml(with_noise, noise, fixture.runs, "synthetic", layout);
    CAPTURE(yaml);
    for (const char* key :
         {"reference_epochs", "final_accuracy", "initial_loss", "final_loss", "initial_noise_scale",
          "final_noise_scale", "noise_scale_estimate_ratio", "gradient_statistic_noise"}) {
      const auto line = yaml.find(std::string("    ") + key + ": ");
      REQUIRE(line != std::string::npos);
      CHECK(
          yaml.substr(line, yaml.find('\n', line) - line).find("# fitted: runs.csv, residual: ") !=
          std::string::npos);
    }
    const std::string file = fixture.dir.write("workload.yaml", yaml);
    if (layout == CatalogLayout::kList) {
      const Workload loaded = WorkloadCatalog::load(file).at("synthetic");
      CHECK(loaded.statistics.reference_epochs ==
            doctest::Approx(fit.workload.statistics.reference_epochs).epsilon(1e-5));
      CHECK(loaded.statistics.gradient_statistic_noise == 0.3);
      CHECK(loaded.statistics.noise_scale_estimate_ratio ==
            doctest::Approx(fit.workload.statistics.noise_scale_estimate_ratio).epsilon(1e-5));
      CHECK(loaded.dataset_size == fixture.truth.dataset_size);
      CHECK(loaded.cost.parameters == fixture.truth.cost.parameters);
    }
  }
}

}  // namespace
}  // namespace dynamix
