// The fidelity target on the machine CI runs on: calibrated on the fit subset of the
// shipped measurements (calibration/measurements/loopback_2core_epyc.csv, gloo over loopback on
// a 2-core EPYC VM), the simulator predicts the held-out configurations. Deterministic: the
// measurements are data, the fit is a fixed Nelder-Mead search; nothing is timed here.
#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "sim/calibration/calibration.h"

namespace dynamix {
namespace {

const std::string kSource = DYNAMIX_SOURCE_DIR;

/// Calibrates the loopback scenario on `subset` of a shipped measurement file, searching the
/// first `knob_count` default knobs (all by default).
Calibration loopback_calibration(const FitSubset& subset,
                                 const std::string& file = "loopback_2core_epyc.csv",
                                 std::size_t knob_count = 7) {
  const MeasurementFile measured = read_measurements(kSource + "/calibration/measurements/" + file);
  ClusterModel model;
  model.scenario = kSource + "/calibration/loopback.yaml";
  const std::vector<std::string> defaults = default_fit_knobs("cpu-rank");
  REQUIRE(knob_count <= defaults.size());
  std::vector<FitKnob> knobs;
  for (std::size_t k = 0; k < knob_count; ++k) knobs.push_back(parse_fit_knob(defaults[k], "test"));
  return calibrate(model, measured, subset, knobs, "cpu-rank");
}

FitSubset default_subset() {
  return parse_fit_subset(kDefaultFitKinds, "", kDefaultFitSizes, kDefaultFitBatches);
}

const FidelitySummary& summary_of(const std::vector<FidelitySummary>& summaries,
                                  MeasurementKind kind) {
  for (const FidelitySummary& summary : summaries)
    if (summary.kind == kind) return summary;
  FAIL("no held-out rows of kind " << kind_name(kind));
  return summaries.front();
}

TEST_CASE("calibrated on the default subset, the loopback model predicts what it held out") {
  // Fitted: the all-reduces at powers of 4 and the DDP iterations at batches 16 and 128 (both
  // rank counts); held out: the all-reduces between and the iterations at 32 and 64. Both runs
  // of the measuring script: the shipped one (a busy machine, SCHED_RR) and one six hours later
  // on the idle machine.
  for (const std::string file : {"loopback_2core_epyc.csv", "loopback_2core_epyc_idle.csv"}) {
    CAPTURE(file);
    const Calibration calibration = loopback_calibration(default_subset(), file);
    const auto held_out = summarize(calibration.rows, false);
    const FidelitySummary& allreduce = summary_of(held_out, MeasurementKind::kAllReduce);
    CHECK(allreduce.configurations == 10);
    CHECK(allreduce.total.median_absolute_error <= 0.10);
    CHECK(allreduce.kendall_tau >= 0.9);
    const FidelitySummary& iteration = summary_of(held_out, MeasurementKind::kIteration);
    CHECK(iteration.configurations == 4);
    CHECK(iteration.total.median_absolute_error <= 0.10);
    CHECK(iteration.kendall_tau >= 0.9);
  }
}

TEST_CASE("fitted on all-reduces alone, the iterations are a prediction the model misses") {
  // No iteration in the fit, so only the four network knobs (κ, σ and the bucket work stay at
  // their defaults, 0): the iterations test the composition alone (docs/calibration.md, "Why
  // the iterations miss").
  const Calibration calibration = loopback_calibration(
      parse_fit_subset("allreduce,compute", "", kDefaultFitSizes), "loopback_2core_epyc.csv", 4);
  const auto held_out = summarize(calibration.rows, false);
  const FidelitySummary& allreduce = summary_of(held_out, MeasurementKind::kAllReduce);
  CHECK(allreduce.configurations == 10);
  CHECK(allreduce.total.median_absolute_error <= 0.10);
  const FidelitySummary& iteration = summary_of(held_out, MeasurementKind::kIteration);
  CHECK(iteration.configurations == 8);
  CHECK(iteration.total.median_absolute_error <= 0.5);
}

TEST_CASE("the loopback calibration is deterministic") {
  const Calibration first = loopback_calibration(default_subset());
  const Calibration second = loopback_calibration(default_subset());
  CHECK(first.fit.overrides == second.fit.overrides);
  CHECK(first.fit.evaluations == second.fit.evaluations);
}

}  // namespace
}  // namespace dynamix
