// The baseline policies behave as their papers describe and as `--policies` names them.
#include "policies/baselines/baselines.h"

#include <doctest/doctest.h>

#include <limits>
#include <numeric>

#include "gym/env_knobs.h"
#include "gym/scenario_source.h"
#include "sim/io/input_error.h"
#include "studies/evaluation.h"

namespace dynamix {
namespace {

std::shared_ptr<const ScenarioSource> quickstart(const std::vector<std::string>& overrides = {
                                                     "training.budget_epochs=2"}) {
  return std::make_shared<FixedScenario>(
      std::make_shared<const Scenario>(load_scenario(kDefaultScenario, overrides)));
}

std::vector<int> last_batches(const DecisionLog& log, std::size_t workers) {
  std::vector<int> batches;
  for (std::size_t i = log.rows().size() - workers; i < log.rows().size(); ++i) {
    batches.push_back(log.rows()[i].batch_size);
  }
  return batches;
}

TEST_CASE("make_baseline knows every baseline and lists them for an unknown name") {
  for (const char* name :
       {"static:64", "random", "proportional", "goodput", "goodput+proportional",
        "goodput+straggler", "goodput+ema", "goodput+proportional+ema", "goodput+straggler+ema",
        "gns", "noise:400", "goodput:100", "goodput-steady:100", "goodput-notice:100"}) {
    CHECK(make_baseline(name, 1)->name() == name);
  }
  CHECK_THROWS_WITH_AS(
      make_baseline("pollux", 1, "--policies"),
      "--policies: expected one of static:B, random, proportional, goodput, "
      "goodput+proportional, goodput+straggler, each goodput rule +ema, gns, schedule:B/E:B/..., "
      "hindsight:B/E:B/..., noise:R, goodput:R, goodput-steady:R, goodput-notice:R, ppo:PATH, "
      "found 'pollux'",
      InputError);
  for (const char* name : {"gns+ema", "proportional+ema", "goodput+ema+ema"}) {
    CHECK_THROWS_AS(make_baseline(name, 1), InputError);
  }
  CHECK_THROWS_AS(make_baseline("static:0", 1), InputError);
  CHECK_THROWS_WITH_AS(make_baseline("noise:0", 1, "--policies"),
                       "--policies: expected noise:R with an integer percentage R >= 1, found "
                       "'noise:0'",
                       InputError);
}

TEST_CASE("A static policy starts and stays at its batch on every worker") {
  BatchSizeEnv env(quickstart(), evaluation_env_options());
  StaticPolicy policy(96);
  DecisionLog log;
  const EpisodeResult result = run_episode(env, policy, 1, &log);
  for (const DecisionRow& row : log.rows()) CHECK(row.batch_size == 96);
  CHECK(result.mean_batch_size == doctest::Approx(96));
  CHECK(result.decisions == log.decisions());
}

TEST_CASE("The random policy is reproducible from its seed and logs valid action indices") {
  auto rollout = [](std::uint64_t seed) {
    BatchSizeEnv env(quickstart(), evaluation_env_options());
    RandomPolicy policy(seed);
    DecisionLog log;
    run_episode(env, policy, seed, &log);
    std::vector<int> batches;
    for (const DecisionRow& row : log.rows()) batches.push_back(row.batch_size);
    return batches;
  };
  CHECK(rollout(4) == rollout(4));
  CHECK(rollout(4) != rollout(5));
}

TEST_CASE("The proportional split gives faster GPUs larger batches and keeps the global batch") {
  BatchSizeEnv env(quickstart(), evaluation_env_options());
  ProportionalPolicy policy;
  DecisionLog log;
  run_episode(env, policy, 1, &log);
  const std::vector<int> batches = last_batches(log, env.workers());
  // quickstart: workers 0-3 are A100, 4-7 V100.
  CHECK(batches[0] > batches[4] * 1.3);
  const int global = std::accumulate(batches.begin(), batches.end(), 0);
  CHECK(std::abs(global - 128 * 8) <= 8);
}

TEST_CASE("Goodput moves the batch away from a poor starting point and beats it to the target") {
  auto time_to_target = [](Policy& policy) {
    BatchSizeEnv env(quickstart({"training.budget_epochs=200", "training.target_accuracy=0.88"}),
                     evaluation_env_options());
    return run_episode(env, policy, 1).time_to_target_s.value_or(1e9);
  };
  StaticPolicy tiny(32);
  GoodputPolicy goodput;
  CHECK(time_to_target(goodput) < time_to_target(tiny));
}

/// Quick start with frequent long stragglers that ramp up over 30 s: one is nearly always on.
std::shared_ptr<const ScenarioSource> straggling(const std::string& rate_per_hour) {
  return quickstart(
      {"training.budget_epochs=200", "training.target_accuracy=0.88",
       "variability.straggler_rate_per_hour=" + rate_per_hour, "variability.straggler_slowdown=3",
       "variability.straggler_mean_duration_s=120", "variability.straggler_onset_s=30"});
}

double time_to_target(const std::shared_ptr<const ScenarioSource>& scenario,
                      const std::string& policy) {
  BatchSizeEnv env(scenario, evaluation_env_options());
  return run_episode(env, *make_baseline(policy, 1), 3).time_to_target_s.value_or(1e9);
}

TEST_CASE("A hindsight schedule that knows the straggler timeline beats the measured split") {
  const auto scenario = straggling("12");
  CHECK(time_to_target(scenario, "hindsight:64") < time_to_target(scenario, "schedule:64"));
  CHECK(make_baseline("hindsight:64/10:128", 1)->name() == "hindsight:64/10:128");
}

TEST_CASE("Without stragglers a hindsight schedule runs exactly as its plain schedule") {
  const auto scenario = straggling("0");
  CHECK(time_to_target(scenario, "hindsight:64") == time_to_target(scenario, "schedule:64"));
}

TEST_CASE("The gradient-noise-scale policy starts small and grows as the noise scale grows") {
  BatchSizeEnv env(quickstart({"training.budget_epochs=60"}), evaluation_env_options());
  GnsPolicy policy;
  DecisionLog log;
  run_episode(env, policy, 1, &log);
  CHECK(log.rows().front().batch_size == 32);
  const std::vector<int> batches = last_batches(log, env.workers());
  CHECK(batches[0] > 32);
}

TEST_CASE("noise:R holds the global batch at R% of the measured noise scale, split by speed") {
  BatchSizeEnv env(quickstart({"training.budget_epochs=3"}), evaluation_env_options());
  AnchorRatioPolicy policy(ActionBase::kNoise, 400);
  env.reset(1, {.initial_batch = 64});
  StepResult step;
  for (int decision = 0; decision < 5; ++decision) {
    const double noise = measured_noise_scale(env.window());
    REQUIRE(noise > 0);
    const std::vector<int> batches = policy.decide(env.decision_context(), step.observation);
    int global = 0;
    for (int b : batches) global += b;
    // Within rounding, unless a bound (32 per worker) holds it up.
    if (4 * noise > 32.0 * static_cast<double>(batches.size())) {
      CHECK(std::abs(global - 4 * noise) <= static_cast<double>(batches.size()));
    }
    env.step_batches(batches, step);
  }
}

TEST_CASE("goodput:R holds the global batch at R% of the goodput-optimal one, split by speed") {
  BatchSizeEnv env(quickstart({"training.budget_epochs=3"}), evaluation_env_options());
  auto policy = make_baseline("goodput:141", 1);
  CHECK(policy->name() == "goodput:141");
  CHECK(policy->kind() == PolicyKind::kOther);
  env.reset(1, {.initial_batch = 64});
  StepResult step;
  for (int decision = 0; decision < 5; ++decision) {
    const double optimum = goodput_optimal_batch(env.window());
    REQUIRE(optimum > 0);
    const std::vector<int> batches = policy->decide(env.decision_context(), step.observation);
    int global = 0;
    for (int b : batches) global += b;
    if (1.41 * optimum > 32.0 * static_cast<double>(batches.size())) {
      CHECK(std::abs(global - 1.41 * optimum) <= static_cast<double>(batches.size()));
    }
    env.step_batches(batches, step);
  }
  CHECK_THROWS_WITH(make_baseline("goodput:0", 1, "--policies"),
                    doctest::Contains("goodput:R with an integer percentage R >= 1"));
}

/// A window of four workers of equal speed, with a measured noise scale and overhead.
WindowMetrics four_equal_workers() {
  WindowMetrics window;
  window.iteration_s = 0.5;
  for (int w = 0; w < 4; ++w) {
    window.workers.push_back(
        {.batch_size = 128, .compute_s = 0.2, .samples_per_s = 640, .grad_var_norm = 8.0});
  }
  return window;
}

TEST_CASE(
    "goodput-notice gives a worker leaving within the next window the smallest batch and "
    "the survivors the rest") {
  const EnvOptions options = evaluation_env_options();
  const WindowMetrics window = four_equal_workers();
  const std::vector<int> batches(4, 128);
  const std::vector<int> limits(4, 4096);
  const double inf = std::numeric_limits<double>::infinity();
  // Windows of k = 10 iterations of 0.5 s: the worker leaves 4 s into the next one.
  const std::vector<double> leaving = {inf, 4.0, inf, inf};
  const Observation observation;
  const DecisionContext noticed{.options = options,
                                .window = window,
                                .batches = batches,
                                .max_batches = limits,
                                .reference_batch = 128,
                                .leaving_in_s = leaving};
  const std::vector<int> chosen = NoticeGoodputPolicy(100).decide(noticed, observation);
  REQUIRE(chosen.size() == 4);
  CHECK(chosen[1] == options.min_batch);

  // The survivors' global batch is goodput:100's for a cluster of the three of them.
  WindowMetrics survivors = window;
  survivors.workers.pop_back();
  const std::vector<int> three(3, 128);
  const DecisionContext after{.options = options,
                              .window = survivors,
                              .batches = three,
                              .max_batches = limits,
                              .reference_batch = 128};
  const std::vector<int> anchored = make_baseline("goodput:100", 1)->decide(after, observation);
  CHECK(chosen[0] + chosen[2] + chosen[3] == std::accumulate(anchored.begin(), anchored.end(), 0));
  CHECK(chosen[0] > 128);

  // Without notices, or with a departure after the next window, it is goodput:100.
  const DecisionContext calm{.options = options,
                             .window = window,
                             .batches = batches,
                             .max_batches = limits,
                             .reference_batch = 128};
  const std::vector<int> goodput = make_baseline("goodput:100", 1)->decide(calm, observation);
  CHECK(NoticeGoodputPolicy(100).decide(calm, observation) == goodput);
  const std::vector<double> later = {inf, 30.0, inf, inf};
  DecisionContext distant = calm;
  distant.leaving_in_s = later;
  CHECK(NoticeGoodputPolicy(100).decide(distant, observation) == goodput);
}

TEST_CASE("A learned policy's fixed point is the anchor rule at its neutral action, where one is") {
  CHECK(fixed_point_policy(ActionBase::kGoodput, default_actions(ActionBase::kGoodput)) ==
        "goodput:100");
  CHECK(fixed_point_policy(ActionBase::kNoise, default_actions(ActionBase::kNoise)) == "noise:400");
  const std::vector<int> without_hundred = {60, 80, 120};
  CHECK(fixed_point_policy(ActionBase::kGoodput, without_hundred) == "goodput:80");
  for (const ActionBase base : {ActionBase::kCurrent, ActionBase::kBalanced, ActionBase::kGlobal}) {
    CAPTURE(action_base_name(base));
    CHECK_FALSE(fixed_point_policy(base, default_actions(base)).has_value());
  }
  // The named rule decides as every worker taking the neutral action does.
  const EnvOptions options = evaluation_env_options();
  WindowMetrics window = four_equal_workers();
  window.workers[0].samples_per_s = 1280;
  const std::vector<int> batches = {96, 128, 160, 128};
  const std::vector<int> limits(4, 1 << 20);
  const DecisionContext context{.options = options,
                                .window = window,
                                .batches = batches,
                                .max_batches = limits,
                                .reference_batch = 128};
  for (const ActionBase base : {ActionBase::kGoodput, ActionBase::kNoise}) {
    CAPTURE(action_base_name(base));
    const std::vector<int> actions = default_actions(base);
    const std::vector<int> neutral(4, static_cast<int>(*neutral_action(base, actions)));
    std::vector<long long> requested;
    requested_batches(base, actions, window, batches, neutral, requested);
    const std::vector<int> anchored =
        make_baseline(*fixed_point_policy(base, actions), 1)->decide(context, Observation{});
    REQUIRE(anchored.size() == requested.size());
    for (std::size_t w = 0; w < anchored.size(); ++w) {
      CHECK(anchored[w] ==
            std::clamp<long long>(requested[w], options.min_batch, options.max_batch));
    }
    CHECK(anchored != batches);
  }
}

}  // namespace
}  // namespace dynamix
