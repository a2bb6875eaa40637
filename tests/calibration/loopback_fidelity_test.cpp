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

/// Calibrates the loopback scenario on `subset` of a shipped measurement file: the default knobs,
/// then `extra` ones.
Calibration loopback_calibration(const FitSubset& subset, const std::vector<std::string>& extra,
                                 const std::string& file = "loopback_2core_epyc.csv") {
  const MeasurementFile measured = read_measurements(kSource + "/calibration/measurements/" + file);
  ClusterModel model;
  model.scenario = kSource + "/calibration/loopback.yaml";
  std::vector<FitKnob> knobs;
  for (const char* knob : kDefaultFitKnobs) knobs.push_back(parse_fit_knob(knob, "test"));
  for (const std::string& knob : extra) knobs.push_back(parse_fit_knob(knob, "test"));
  return calibrate(model, measured, subset, knobs, "cpu-rank");
}

Calibration loopback_calibration() {
  return loopback_calibration(parse_fit_subset(kDefaultFitKinds, "", kDefaultFitSizes), {});
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

TEST_CASE(
    "with the co-located-rank terms fitted on two batches, held-out iterations are within 10%") {
  // docs/calibration.md, "With the missing terms added": DDP iterations at batches 16 and 128
  // join the fit, with κ, the bucket work and the oversubscription skew σ; batches 32 and 64
  // (both rank counts) and the all-reduces between the powers of 4 are held out. Both runs of
  // the measuring script: the shipped one (a busy machine, SCHED_RR) and one 6 hours later on
  // the idle machine.
  for (const std::string file : {"loopback_2core_epyc.csv", "loopback_2core_epyc_idle.csv"}) {
    CAPTURE(file);
    const Calibration calibration = loopback_calibration(
        parse_fit_subset("allreduce,iteration,compute", "", kDefaultFitSizes, "16,128"),
        {"devices.cpu-rank.colocation_slowdown=0.001:2:0.1",
         "sync.bucket_overhead_us=0.1:10000:300",
         "devices.cpu-rank.oversubscription_skew=0.01:0.99:0.5"},
        file);
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

TEST_CASE("the loopback calibration is deterministic") {
  const Calibration first = loopback_calibration();
  const Calibration second = loopback_calibration();
  CHECK(first.fit.overrides == second.fit.overrides);
  CHECK(first.fit.evaluations == second.fit.evaluations);
}

}  // namespace
}  // namespace dynamix
