// Action bases: what a batch change adds to.
#include "gym/action_base.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "gym/batch_size_env.h"

namespace dynamix {
namespace {

WindowMetrics window_with_speeds(std::vector<double> speeds) {
  WindowMetrics window;
  for (double speed : speeds) window.workers.push_back({.samples_per_s = speed});
  return window;
}

TEST_CASE("names round-trip and unknown names are refused") {
  for (ActionBase base : {ActionBase::kCurrent, ActionBase::kBalanced}) {
    CHECK(parse_action_base(action_base_name(base)) == base);
  }
  CHECK_FALSE(parse_action_base("proportional").has_value());
  CHECK(action_base_names() == "current, balanced");
}

TEST_CASE("current: changes add to each worker's batch") {
  std::vector<int> bases;
  action_bases(ActionBase::kCurrent, window_with_speeds({100, 300}), std::vector<int>{64, 64},
               bases);
  CHECK(bases == std::vector<int>{64, 64});
}

TEST_CASE("balanced: the global batch split in proportion to measured speed") {
  std::vector<int> bases;
  action_bases(ActionBase::kBalanced, window_with_speeds({100, 300}), std::vector<int>{64, 64},
               bases);
  CHECK(bases == std::vector<int>{32, 96});
  // Batches whose compute times already meet are a fixed point.
  action_bases(ActionBase::kBalanced, window_with_speeds({50, 100, 200}),
               std::vector<int>{40, 80, 160}, bases);
  CHECK(bases == std::vector<int>{40, 80, 160});
}

TEST_CASE("balanced: without a speed for every worker, the current batches") {
  std::vector<int> bases;
  action_bases(ActionBase::kBalanced, window_with_speeds({100, 0}), std::vector<int>{64, 128},
               bases);
  CHECK(bases == std::vector<int>{64, 128});
  action_bases(ActionBase::kBalanced, window_with_speeds({100}), std::vector<int>{64, 128}, bases);
  CHECK(bases == std::vector<int>{64, 128});
}

double compute_spread(const WindowMetrics& window) {
  double low = 1e300, high = 0;
  for (const WorkerWindow& worker : window.workers) {
    low = std::min(low, worker.compute_s);
    high = std::max(high, worker.compute_s);
  }
  return high / low;
}

TEST_CASE(
    "BatchSizeEnv: holding under the (default) balanced base evens compute times, keeps the "
    "total") {
  auto source = std::make_shared<FixedScenario>(
      std::make_shared<const Scenario>(load_scenario(kDefaultScenario)));
  EnvOptions options;
  const int hold = static_cast<int>(std::find(options.actions.begin(), options.actions.end(), 0) -
                                    options.actions.begin());
  BatchSizeEnv balanced(source, options);
  options.action_base = ActionBase::kCurrent;
  BatchSizeEnv current(source, options);
  balanced.reset(3, {.initial_batch = 128});
  current.reset(3, {.initial_batch = 128});
  const double uneven = compute_spread(current.window());
  REQUIRE(uneven > 1.3);  // the quickstart mixes GPU generations
  const std::vector<int> holds(balanced.workers(), hold);
  for (int decision = 0; decision < 3; ++decision) {
    balanced.step(holds);
    current.step(holds);
  }
  CHECK(current.batches() == std::vector<int>(current.workers(), 128));
  CHECK(compute_spread(balanced.window()) < 1.1);
  int total = 0;
  for (int b : balanced.batches()) total += b;
  CHECK(std::abs(total - 128 * static_cast<int>(balanced.workers())) <=
        static_cast<int>(balanced.workers()));
}

}  // namespace
}  // namespace dynamix
