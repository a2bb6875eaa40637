// Evaluation statistics and the summary table.
#include "policies/evaluation.h"

#include <doctest/doctest.h>

#include <sstream>

namespace dynamix {
namespace {

TEST_CASE("bootstrap_mean brackets the mean and collapses for identical values") {
  const std::vector<double> values = {10, 12, 9, 11, 13, 8, 10};
  const Interval interval = bootstrap_mean(values, 1);
  CHECK(interval.mean == doctest::Approx(73.0 / 7));
  CHECK(interval.low < interval.mean);
  CHECK(interval.high > interval.mean);
  CHECK(interval.low > 8);
  CHECK(interval.high < 13);
  const std::vector<double> same = {5, 5, 5};
  const Interval flat = bootstrap_mean(same, 1);
  CHECK(flat.low == 5);
  CHECK(flat.high == 5);
}

TEST_CASE("The summary gives each policy's ratio to the best static batch of its scenario") {
  std::vector<EpisodeResult> results;
  auto add = [&](const char* scenario, const char* policy, std::optional<double> time) {
    EpisodeResult r;
    r.scenario = scenario;
    r.policy = policy;
    r.time_to_target_s = time;
    r.total_time_s = 500;
    r.final_accuracy = 0.9;
    results.push_back(r);
  };
  add("a", "static:64", 200.0);
  add("a", "static:128", 100.0);
  add("a", "ppo", 80.0);
  add("b", "static:64", 50.0);
  add("b", "ppo", std::nullopt);
  std::ostringstream out;
  write_summary_markdown(out, results);
  const std::string text = out.str();
  CHECK(text.find("Best static batch: static:128") != std::string::npos);
  CHECK(text.find("| ppo | 1/1 | 80.0 [80.0, 80.0] | 0.9000 [0.9000, 0.9000] | 0.800 |") !=
        std::string::npos);
  CHECK(text.find("| ppo | 0/1 | 500.0 [500.0, 500.0]") != std::string::npos);
  CHECK(text.find("| ppo | 2.828 |") != std::string::npos);
}

}  // namespace
}  // namespace dynamix
