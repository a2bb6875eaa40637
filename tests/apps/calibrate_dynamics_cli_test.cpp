// End to end: `dynamix calibrate --dynamics` on runs the simulator generated writes a workload
// entry that the catalog reads back, the per-run residuals and the estimator's noise; a bad runs
// file exits 2 with one line naming file and line, writing nothing.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "sim/training/workload.h"
#include "tests/apps/run_dynamix.h"
#include "tests/sim/calibration/synthetic_runs.h"

namespace dynamix {
namespace {

using namespace testing;
namespace fs = std::filesystem;

const char* const kCatalog = R"(workloads:
  - name: synthetic
    model: mlp
    dataset: teacher
    source: tests/sim/calibration/synthetic_runs.h
    parameters: 1.0e5
    flops_per_sample: 1.0e6
    activation_bytes_per_sample: 1.0e4
    cpu_seconds_per_sample: 1.0e-6
    dataset_size: 20000
    validation_size: 20000
    classes: 10
    reference_batch: 64
    reference_epochs: 20
    final_accuracy: 0.7
    final_accuracy_adam: 0.69
    final_train_accuracy: 0.95
    initial_loss: 2.3
    final_loss: 0.3
    initial_noise_scale: 100
    final_noise_scale: 1000
    target_accuracy: 0.8
)";

TEST_CASE(
    "calibrate --dynamics writes the fitted workload, its residuals and the estimator noise") {
  TempDirectory work;
  const std::string runs = work.write(
      "runs.csv", synthetic_runs_csv(synthetic_workload(),
                                     {{.label = "small", .global_batch = 64, .windows = 150},
                                      {.label = "middle", .global_batch = 256, .windows = 50},
                                      {.label = "large", .global_batch = 1024, .windows = 16}},
                                     {}));
  const std::string catalog = work.write("catalog.yaml", kCatalog);
  const Outcome fit =
      dynamix("calibrate --dynamics " + quoted(runs) + " --workload synthetic --catalog " +
              quoted(catalog) + " --out " + quoted(work / "fit"));
  REQUIRE_MESSAGE(fit.status == 0, fit.stderr_text);
  CHECK(fit.stdout_text.find("held-out (1 runs): accuracy RMSE") != std::string::npos);
  CHECK(fit.stdout_text.find("gradient_statistic_noise ") != std::string::npos);
  const fs::path out = work.path() / "fit";
  CHECK(contents(out / "runs.csv") == contents(runs));

  const Workload fitted = WorkloadCatalog::load(out / "workload.yaml").at("synthetic");
  // These runs stop before the curve flattens: what they fix is where it bends, the knee in
  // epochs reference_epochs·p0 (5 · 0.002), not reference_epochs and p0 apart.
  MESSAGE("reference_epochs " << fitted.statistics.reference_epochs << ", convergence_knee "
                              << fitted.statistics.convergence_knee.value_or(0)
                              << ", convergence_exponent "
                              << fitted.statistics.convergence_exponent.value_or(0));
  CHECK(fitted.statistics.reference_epochs * fitted.statistics.convergence_knee.value() ==
        doctest::Approx(0.01).epsilon(0.1));
  CHECK(fitted.statistics.convergence_exponent.value() == doctest::Approx(0.7).epsilon(0.1));
  CHECK(fitted.statistics.final_accuracy == doctest::Approx(0.85).epsilon(0.01));
  CHECK(fitted.dataset_size == 20000);
  CHECK(contents(out / "workload.yaml").find("# fitted: runs.csv, residual: ") !=
        std::string::npos);
  CHECK(contents(out / "catalog.yaml").find("  \"synthetic\":\n") != std::string::npos);

  const Csv residuals = read_csv(out / "dynamics_fit.csv");
  REQUIRE(residuals.rows.size() == 3);
  const std::size_t role = residuals.column("role");
  CHECK(residuals.rows[0][role] == "fitted");
  CHECK(residuals.rows[1][role] == "held-out");
  CHECK(residuals.rows[2][role] == "fitted");
  const std::size_t error = residuals.column("samples_relative_error");
  CHECK(std::abs(std::stod(residuals.rows[1][error])) < 0.2);

  const Csv noise = read_csv(out / "estimator_noise.csv");
  REQUIRE(noise.rows.size() == 3);
  CHECK(std::stod(noise.rows[0][noise.column("real_log_spread")]) ==
        doctest::Approx(0.2).epsilon(0.2));
}

TEST_CASE("calibrate --dynamics refuses a bad runs file or option with one line, writing nothing") {
  TempDirectory work;
  const std::string catalog = work.write("catalog.yaml", kCatalog);
  const std::string header = std::string(kRunsHeader) + "\n";
  const struct {
    std::string runs;
    std::string options;
    std::string expected;
  } cases[] = {
      {header + "a,0,10,640,0.1,64,16,1,x,0.5,2,1.5\n", "",
       "runs.csv:2: train_loss: expected a finite number > 0, found 'x'"},
      {header + "a,0,10,640,0.1,64,16,1,2,,2,1.5\n", "",
       "runs.csv:2: validation_accuracy: expected at least one validation accuracy in run 'a'"},
      {header + "a,0,10,640,0.1,64,16,1,2,0.5,2,1.5\n", " --dynamics-fit-runs b",
       "--dynamics-fit-runs: expected runs of "},
      {header + "a,0,10,640,0.1,64,16,1,2,0.5,2,1.5\n", " --workload nope",
       "--workload: expected a workload of "},
  };
  for (const auto& bad : cases) {
    CAPTURE(bad.runs);
    const std::string runs = work.write("runs.csv", bad.runs);
    std::string command = "calibrate --dynamics " + quoted(runs) + " --catalog " + quoted(catalog) +
                          " --out " + quoted(work / "out");
    command += bad.options.find("--workload") == std::string::npos ? " --workload synthetic" : "";
    const Outcome outcome = dynamix(command + bad.options);
    CHECK(outcome.status == 2);
    CHECK(outcome.stdout_text.empty());
    CHECK(outcome.stderr_text.find(bad.expected) != std::string::npos);
    CHECK(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(work.path() / "out"));
  }
}

}  // namespace
}  // namespace dynamix
