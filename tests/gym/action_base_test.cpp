// Action bases: what a batch change adds to.
#include "gym/action_base.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"

namespace dynamix {
namespace {

WindowMetrics window_with_speeds(const std::vector<double>& speeds) {
  WindowMetrics window;
  for (double speed : speeds) window.workers.push_back({.samples_per_s = speed});
  return window;
}

TEST_CASE("names round-trip and unknown names are refused") {
  for (ActionBase base : kActionBases) CHECK(parse_action_base(action_base_name(base)) == base);
  CHECK_FALSE(parse_action_base("proportional").has_value());
  CHECK(action_base_names() == "current, balanced, global, noise, goodput, goodput-steady, rule");
}

/// The batches workers ask for under `base` with the default action set, all taking `chosen`.
std::vector<long long> requested(ActionBase base, const WindowMetrics& window,
                                 const std::vector<int>& current, const std::vector<int>& chosen) {
  std::vector<long long> out;
  requested_batches(base, default_actions(base), window, current, chosen, out);
  return out;
}

// Default action sets: {-100, -25, 0, 25, 100} samples; global {-50, -20, 0, 25, 100} percent.
TEST_CASE("current: changes add to each worker's batch") {
  CHECK(requested(ActionBase::kCurrent, window_with_speeds({100, 300}), {64, 64}, {2, 3}) ==
        std::vector<long long>{64, 89});
}

TEST_CASE("balanced: the global batch split in proportion to measured speed, plus the change") {
  CHECK(requested(ActionBase::kBalanced, window_with_speeds({100, 300}), {64, 64}, {2, 2}) ==
        std::vector<long long>{32, 96});
  CHECK(requested(ActionBase::kBalanced, window_with_speeds({100, 300}), {64, 64}, {0, 4}) ==
        std::vector<long long>{-68, 196});
  // Batches whose compute times already meet are a fixed point.
  CHECK(requested(ActionBase::kBalanced, window_with_speeds({50, 100, 200}), {40, 80, 160},
                  {2, 2, 2}) == std::vector<long long>{40, 80, 160});
}

TEST_CASE("balanced and global: without a speed for every worker, the current batches") {
  for (ActionBase base : {ActionBase::kBalanced, ActionBase::kGlobal}) {
    CHECK(requested(base, window_with_speeds({100, 0}), {64, 128}, {2, 2}) ==
          std::vector<long long>{64, 128});
    CHECK(requested(base, window_with_speeds({100}), {64, 128}, {2, 2}) ==
          std::vector<long long>{64, 128});
  }
  // Without speeds a global change scales every current batch.
  CHECK(requested(ActionBase::kGlobal, window_with_speeds({}), {64, 128}, {4, 4}) ==
        std::vector<long long>{128, 256});
}

TEST_CASE("global: one change scales the global batch, split by speed, at any cluster size") {
  CHECK(requested(ActionBase::kGlobal, window_with_speeds({100, 300}), {64, 64}, {3, 3}) ==
        std::vector<long long>{40, 120});
  const std::vector<double> speeds(256, 50.0);
  const std::vector<long long> doubled =
      requested(ActionBase::kGlobal, window_with_speeds(speeds), std::vector<int>(256, 32),
                std::vector<int>(256, 4));
  CHECK(doubled == std::vector<long long>(256, 64));
  // Different choices meet in their geometric mean: x2 and x0.5 hold the global batch.
  CHECK(requested(ActionBase::kGlobal, window_with_speeds({100, 100}), {64, 64}, {4, 0}) ==
        std::vector<long long>{64, 64});
}

/// Workers with speeds and a measured noise scale: σ²_norm·b averages to `noise`.
WindowMetrics window_with_noise(const std::vector<double>& speeds,
                                const std::vector<double>& batches, double noise) {
  WindowMetrics window = window_with_speeds(speeds);
  for (std::size_t w = 0; w < window.workers.size(); ++w) {
    window.workers[w].batch_size = batches[w];
    window.workers[w].grad_var_norm = noise / batches[w];
  }
  return window;
}

TEST_CASE("noise: the global batch is a percentage of the measured noise scale, split by speed") {
  // Default set {100, 200, 400, 800, 1600}%; B_noise = 300.
  const WindowMetrics window = window_with_noise({100, 200}, {64, 64}, 300);
  CHECK(measured_noise_scale(window) == doctest::Approx(300));
  CHECK(requested(ActionBase::kNoise, window, {64, 64}, {0, 0}) ==
        std::vector<long long>{100, 200});
  CHECK(requested(ActionBase::kNoise, window, {64, 64}, {2, 2}) ==
        std::vector<long long>{400, 800});
  // The same action asks for the same global batch at any cluster size and starting batch.
  const WindowMetrics large =
      window_with_noise(std::vector<double>(100, 10), std::vector<double>(100, 256), 3000);
  const std::vector<long long> asked =
      requested(ActionBase::kNoise, large, std::vector<int>(100, 256), std::vector<int>(100, 1));
  CHECK(asked == std::vector<long long>(100, 60));
  // Unmeasured: the current global batch, split by speed.
  CHECK(requested(ActionBase::kNoise, window_with_noise({100, 300}, {64, 64}, 0), {64, 64},
                  {4, 4}) == std::vector<long long>{32, 96});
  CHECK(neutral_action(ActionBase::kNoise, default_actions(ActionBase::kNoise)) == 2u);
  CHECK(neutral_action(ActionBase::kBalanced, default_actions(ActionBase::kBalanced)) == 2u);
  CHECK(invalid_action(ActionBase::kNoise, std::vector<int>{100, 0}) == 0);
}

/// A window at global batch 128 whose iteration takes `iteration_s`: two workers at 100 and 300
/// samples per second of compute (0.32 s at a balanced split), B_noise = 300.
WindowMetrics window_with_overhead(double iteration_s) {
  WindowMetrics window = window_with_noise({100, 300}, {64, 64}, 300);
  window.iteration_s = iteration_s;
  return window;
}

TEST_CASE("goodput: the global batch is a percentage of G* = sqrt(B_noise c S), split by speed") {
  // c = 0.52 - 128/400 = 0.2 s of overhead, S = 400 samples/s: G* = sqrt(300·0.2·400) ≈ 154.9.
  const WindowMetrics window = window_with_overhead(0.52);
  CHECK(goodput_optimal_batch(window) == doctest::Approx(154.919).epsilon(1e-5));
  // G* maximizes G/((G/S + c)(B_noise + G)) over the global batch.
  const auto goodput = [](double g) { return g / ((g / 400 + 0.2) * (300 + g)); };
  CHECK(goodput(154.919) > goodput(150));
  CHECK(goodput(154.919) > goodput(160));
  // Default set {50, 71, 100, 141, 200}%; the neutral (middle) action is G* itself.
  CHECK(neutral_action(ActionBase::kGoodput, default_actions(ActionBase::kGoodput)) == 2u);
  CHECK(requested(ActionBase::kGoodput, window, {64, 64}, {2, 2}) ==
        std::vector<long long>{39, 116});
  CHECK(requested(ActionBase::kGoodput, window, {64, 64}, {4, 4}) ==
        std::vector<long long>{77, 232});
  // No overhead or no noise scale measured: the current global batch, split by speed.
  CHECK(goodput_optimal_batch(window_with_overhead(0.3)) == 0);
  CHECK(requested(ActionBase::kGoodput, window_with_overhead(0.3), {64, 64}, {4, 4}) ==
        std::vector<long long>{32, 96});
  CHECK(goodput_optimal_batch(window_with_noise({100, 300}, {64, 64}, 0)) == 0);
  CHECK(invalid_action(ActionBase::kGoodput, std::vector<int>{100, 0}) == 0);
  // The neutral action of a custom set is its 100%, wherever it stands, else the middle.
  CHECK(neutral_action(ActionBase::kGoodput, std::vector<int>{100, 141, 200}) == 0u);
  CHECK(neutral_action(ActionBase::kGoodput, std::vector<int>{50, 90, 120}) == 1u);
  // An optimum whose product overflows is unmeasured.
  WindowMetrics huge = window_with_noise({100, 300}, {64, 64}, 1e300);
  huge.iteration_s = 1e300;
  CHECK(goodput_optimal_batch(huge) == 0);
}

TEST_CASE("goodput-steady: G* only when it gains more than 5% of goodput, else the current G") {
  // B_noise 300: G = 128 has 0.5751 against G* = 154.9's 0.5798 (within 5%): held, split by speed.
  const WindowMetrics near = window_with_overhead(0.52);
  CHECK(goodput_within(near, 0.05));
  CHECK_FALSE(goodput_within(near, 0.005));
  CHECK(requested(ActionBase::kGoodputSteady, near, {64, 64}, {2, 2}) ==
        std::vector<long long>{32, 96});
  CHECK(requested(ActionBase::kGoodputSteady, near, {64, 64}, {4, 4}) ==
        std::vector<long long>{64, 192});
  // B_noise 3000: G* = sqrt(3000·0.2·400) ≈ 489.9 gains 25% over G = 128, so it is the anchor.
  WindowMetrics far = window_with_noise({100, 300}, {64, 64}, 3000);
  far.iteration_s = 0.52;
  CHECK_FALSE(goodput_within(far, 0.05));
  CHECK(requested(ActionBase::kGoodputSteady, far, {64, 64}, {2, 2}) ==
        requested(ActionBase::kGoodput, far, {64, 64}, {2, 2}));
  CHECK(requested(ActionBase::kGoodputSteady, far, {64, 64}, {2, 2}) ==
        std::vector<long long>{122, 367});
  // Unmeasured (no overhead): the current global batch, as the goodput base does.
  CHECK_FALSE(goodput_within(window_with_overhead(0.3), 0.05));
  CHECK(requested(ActionBase::kGoodputSteady, window_with_overhead(0.3), {64, 64}, {2, 2}) ==
        std::vector<long long>{32, 96});
  CHECK(default_actions(ActionBase::kGoodputSteady) == default_actions(ActionBase::kGoodput));
  CHECK(neutral_action(ActionBase::kGoodputSteady, default_actions(ActionBase::kGoodput)) == 2u);
}

TEST_CASE("A target too large to round asks for 2^40 samples in all, split by speed") {
  std::vector<long long> asked;
  const std::vector<int> current = {64, 64}, chosen = {0, 0}, percent = {100};
  requested_batches(ActionBase::kNoise, percent, window_with_noise({1, 1}, {64, 64}, 1e18), current,
                    chosen, asked);
  CHECK(asked == std::vector<long long>(2, 1LL << 39));
}

TEST_CASE("global: a change of -100% or less is refused, by the environment and in policy files") {
  CHECK(invalid_action(ActionBase::kGlobal, std::vector<int>{-50, -100, 0}) == -100);
  CHECK_FALSE(invalid_action(ActionBase::kGlobal, default_actions(ActionBase::kGlobal)));
  CHECK_FALSE(invalid_action(ActionBase::kBalanced, default_actions(ActionBase::kBalanced)));
  auto source = std::make_shared<FixedScenario>(
      std::make_shared<const Scenario>(load_scenario(kDefaultScenario)));
  CHECK_THROWS_WITH_AS(BatchSizeEnv(source, {.decision_interval = 10,
                                             .actions = {-100, 0, 100},
                                             .action_base = ActionBase::kGlobal}),
                       doctest::Contains("actions: expected changes above -100"), EnvError);
  const BatchSizeEnv env(source, {.decision_interval = 10, .action_base = ActionBase::kGlobal});
  CHECK(env.options().actions == default_actions(ActionBase::kGlobal));
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
  EnvOptions options = evaluation_env_options();
  const std::vector<int> actions = default_actions(options.action_base);
  const int hold = static_cast<int>(std::find(actions.begin(), actions.end(), 0) - actions.begin());
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
