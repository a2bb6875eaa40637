// Fitting by simulation: knob values that generated synthetic measurements are found again
// from elsewhere, and fidelity summaries count the fitted and held-out rows apart.
#include "sim/calibration/fit.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/calibration/fidelity.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;

const std::string kScenario = std::string(DYNAMIX_SOURCE_DIR) + "/calibration/loopback.yaml";

std::vector<Measurement> allreduce_rows() {
  std::vector<Measurement> rows;
  for (int ranks : {2, 4}) {
    for (double bytes : {65536.0, 1048576.0, 16777216.0}) {
      Measurement row;
      row.ranks = ranks;
      row.message_bytes = bytes;
      rows.push_back(row);
    }
  }
  return rows;
}

TEST_CASE("fit_knobs finds the knob values that produced the measurements") {
  ClusterModel model;
  model.scenario = kScenario;
  std::vector<Measurement> rows = allreduce_rows();
  const std::vector<std::string> truth{"topology.nodes.0.link.bandwidth_gbps=3.5",
                                       "sync.message_overhead_us=120"};
  const auto simulated = simulate_configurations(model, rows, truth);
  for (std::size_t i = 0; i < rows.size(); ++i) rows[i].total_s = simulated[i].total_s;
  // The 4-rank ring takes longer than the 2-rank one at every size.
  CHECK(simulated[3].total_s > simulated[0].total_s);
  const std::vector<FitKnob> knobs{
      parse_fit_knob("topology.nodes.0.link.bandwidth_gbps=0.01:1000:10", "--fit"),
      parse_fit_knob("sync.message_overhead_us=0.1:100000:10", "--fit")};
  const FitResult fit = fit_knobs(model, rows, knobs);
  CHECK(fit.values[0] == doctest::Approx(3.5).epsilon(0.01));
  CHECK(fit.values[1] == doctest::Approx(120).epsilon(0.02));
  CHECK(fit.rms_log_error < 1e-3);

  FitSubset subset;
  subset.ranks = {2};
  const auto compared = compare(model, rows, subset, fit.overrides);
  const auto held_out = summarize(compared, false);
  REQUIRE(held_out.size() == 1);
  CHECK(held_out[0].configurations == 3);
  CHECK(held_out[0].total.median_absolute_error < 0.01);
  CHECK(held_out[0].kendall_tau == doctest::Approx(1));
}

TEST_CASE("parse_fit_knob refuses bounds that are not ordered positive numbers") {
  const FitKnob knob = parse_fit_knob("sync.message_overhead_us=1:100", "--fit");
  CHECK(knob.initial == doctest::Approx(10));
  CHECK(error_of([] {
          parse_fit_knob("sync.message_overhead_us=100:1", "--fit");
        }).find("--fit: sync.message_overhead_us: expected LOW < HIGH") != std::string::npos);
  CHECK(error_of([] {
          parse_fit_knob("sync.message_overhead_us=0:1", "--fit");
        }).find("positive numbers") != std::string::npos);
  CHECK(error_of([] { parse_fit_knob("1:2", "--fit"); }).find("KEY=LOW:HIGH") != std::string::npos);
}

}  // namespace
}  // namespace dynamix

namespace dynamix {
namespace {

TEST_CASE("parse_fit_subset reads kinds, rank counts and sizes, and names the bad option") {
  const FitSubset subset = parse_fit_subset("allreduce,iteration", "2", "65536");
  Measurement row;
  row.ranks = 2;
  row.message_bytes = 65536;
  CHECK(subset.contains(row));
  row.message_bytes = 131072;
  CHECK(!subset.contains(row));
  row.kind = MeasurementKind::kCompute;
  row.ranks = 1;
  CHECK(!subset.contains(row));
  CHECK(parse_fit_subset("compute", "2", "").contains(row));
  CHECK(testing::error_of([] {
          parse_fit_subset("allreduce,gather", "", "");
        }).find("--fit-kinds: expected allreduce, iteration or compute, found 'gather'") !=
        std::string::npos);
  CHECK(testing::error_of([] { parse_fit_subset("allreduce", "2.5", ""); }).find("--fit-ranks") !=
        std::string::npos);
  CHECK(testing::error_of([] { parse_fit_subset("allreduce", "1e12", ""); }).find("--fit-ranks") !=
        std::string::npos);
}

TEST_CASE("--fit-batches picks the iteration rows fitted, whatever the all-reduce sizes") {
  const FitSubset subset = parse_fit_subset("allreduce,iteration", "", "65536", "16,128");
  Measurement row;
  row.kind = MeasurementKind::kIteration;
  row.ranks = 4;
  row.batch_per_rank = 16;
  CHECK(subset.contains(row));
  row.batch_per_rank = 32;
  CHECK(!subset.contains(row));
  CHECK(parse_fit_subset("iteration", "", "").contains(row));
  CHECK(testing::error_of([] {
          parse_fit_subset("iteration", "", "", "16,x");
        }).find("--fit-batches") != std::string::npos);
}

TEST_CASE("A fitted value at a bound of its search is named; one inside is not") {
  const std::vector<FitKnob> knobs = {parse_fit_knob("sync.call_overhead_us=1:1000", "test"),
                                      parse_fit_knob("sync.reduction_gbps=0.1:100", "test"),
                                      parse_fit_knob("a.b=1:100", "test")};
  const std::vector<double> values = {1.02, 99.5, 10};
  const std::vector<std::string> lines = knobs_at_bounds(knobs, values);
  REQUIRE(lines.size() == 2);
  CHECK(
      lines[0].starts_with("sync.call_overhead_us = 1.02 sits at the lower bound of its search "
                           "[1, 1000]"));
  CHECK(lines[1].starts_with("sync.reduction_gbps = 99.5 sits at the upper bound"));
  CHECK(knobs_at_bounds(knobs, std::vector<double>{30, 3, 10}).empty());
}

}  // namespace
}  // namespace dynamix
