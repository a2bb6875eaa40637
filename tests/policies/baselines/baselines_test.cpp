// The baseline policies behave as their papers describe and as `--policies` names them.
#include "policies/baselines/baselines.h"

#include <doctest/doctest.h>

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
  for (const char* name : {"static:64", "random", "proportional", "goodput", "goodput+proportional",
                           "gns", "noise:400", "goodput:100"}) {
    CHECK(make_baseline(name, 1)->name() == name);
  }
  CHECK_THROWS_WITH_AS(
      make_baseline("pollux", 1, "--policies"),
      "--policies: expected one of static:B, random, proportional, goodput, "
      "goodput+proportional, gns, schedule:B/E:B/..., noise:R, goodput:R, ppo:PATH, "
      "found "
      "'pollux'",
      InputError);
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

}  // namespace
}  // namespace dynamix
