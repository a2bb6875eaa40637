// The outcome target on the machine CI runs on: calibrated on the fit subset of the
// shipped measurements (calibration/measurements/loopback_2core_epyc.csv, gloo over loopback on
// a 2-core EPYC VM), the simulator predicts the held-out configurations. Deterministic: the
// measurements are data, the fit is a fixed Nelder-Mead search; nothing is timed here.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/calibration/calibration.h"

namespace dynamix {
namespace {

const std::string kSource = DYNAMIX_SOURCE_DIR;

Calibration loopback_calibration() {
  const MeasurementFile measured =
      read_measurements(kSource + "/calibration/measurements/loopback_2core_epyc.csv");
  ClusterModel model;
  model.scenario = kSource + "/calibration/loopback.yaml";
  std::vector<FitKnob> knobs;
  for (const char* knob : kDefaultFitKnobs) knobs.push_back(parse_fit_knob(knob, "test"));
  return calibrate(model, measured, parse_fit_subset(kDefaultFitKinds, "", kDefaultFitSizes), knobs,
                   "cpu-rank");
}

const FidelitySummary& summary_of(const std::vector<FidelitySummary>& summaries,
                                  MeasurementKind kind) {
  for (const FidelitySummary& summary : summaries)
    if (summary.kind == kind) return summary;
  FAIL("no held-out rows of kind " << kind_name(kind));
  return summaries.front();
}

TEST_CASE("calibrated on its fit subset, the loopback model predicts held-out all-reduces") {
  const Calibration calibration = loopback_calibration();
  const auto held_out = summarize(calibration.rows, false);
  const FidelitySummary& allreduce = summary_of(held_out, MeasurementKind::kAllReduce);
  CHECK(allreduce.configurations == 10);
  CHECK(allreduce.total.median_absolute_error <= 0.10);
  CHECK(allreduce.kendall_tau >= 0.9);

  // Per-iteration time misses the 10% (docs/calibration.md says by how much and which
  // terms the model lacks): the band catches regressions, the warnings show the gap.
  const FidelitySummary& iteration = summary_of(held_out, MeasurementKind::kIteration);
  CHECK(iteration.configurations == 8);
  CHECK(iteration.total.median_absolute_error <= 0.5);
  WARN(iteration.total.median_absolute_error <= 0.10);
  WARN(iteration.kendall_tau >= 0.9);
}

TEST_CASE("the loopback calibration is deterministic") {
  const Calibration first = loopback_calibration();
  const Calibration second = loopback_calibration();
  CHECK(first.fit.overrides == second.fit.overrides);
  CHECK(first.fit.evaluations == second.fit.evaluations);
}

}  // namespace
}  // namespace dynamix
