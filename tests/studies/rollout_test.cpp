// The hindsight rollout: exact replays of a seed improve goodput:100 block by block.
#include "studies/rollout.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <limits>

#include "gym/env_knobs.h"
#include "gym/rules.h"
#include "gym/scenario_source.h"
#include "policies/baselines/baselines.h"
#include "studies/evaluation.h"

namespace dynamix {
namespace {

std::shared_ptr<const Scenario> short_quickstart() {
  return std::make_shared<const Scenario>(load_scenario(
      kDefaultScenario, {"training.target_accuracy=0.6", "training.budget_epochs=20"}));
}

EnvOptions evaluation_start() {
  EnvOptions env = evaluation_env_options();
  env.initial_batch = kEvaluationInitialBatch;
  return env;
}

/// goodput:R's time to target on `seed`, as `dynamix evaluate` runs it.
double anchor_time(const std::shared_ptr<const Scenario>& scenario, int percent,
                   std::uint64_t seed) {
  EnvOptions env = evaluation_start();
  env.stop_at_target = true;
  BatchSizeEnv batch_env(std::make_shared<FixedScenario>(scenario), env);
  AnchorRatioPolicy policy(ActionBase::kGoodput, percent);
  const EpisodeResult result = run_episode(batch_env, policy, seed);
  return result.time_to_target_s.value_or(std::numeric_limits<double>::infinity());
}

TEST_CASE("One block over the whole episode: the rollout is the fastest constant goodput:R") {
  const auto scenario = short_quickstart();
  RolloutOptions options;
  options.block = 100000;
  const std::vector<RolloutOutcome> outcomes =
      hindsight_rollout(scenario, evaluation_start(), 3, 1, options);
  REQUIRE(outcomes.size() == 1);
  double fastest = std::numeric_limits<double>::infinity();
  for (int percent : options.percents)
    fastest = std::min(fastest, anchor_time(scenario, percent, 3));
  REQUIRE(outcomes[0].base_time_s);
  REQUIRE(outcomes[0].time_s);
  CHECK(*outcomes[0].base_time_s == anchor_time(scenario, 100, 3));
  CHECK(*outcomes[0].time_s == fastest);
  CHECK(outcomes[0].episodes == 1 + static_cast<int>(options.percents.size()) - 1);
}

TEST_CASE("The rollout is never slower than goodput:100 and the same whatever the threads") {
  const auto scenario = short_quickstart();
  RolloutOptions options;
  options.block = 10;
  const std::vector<RolloutOutcome> one =
      hindsight_rollout(scenario, evaluation_start(), 1, 2, options);
  options.jobs = 2;
  const std::vector<RolloutOutcome> two =
      hindsight_rollout(scenario, evaluation_start(), 1, 2, options);
  REQUIRE(one.size() == 2);
  for (std::size_t s = 0; s < one.size(); ++s) {
    CAPTURE(s);
    REQUIRE(one[s].base_time_s);
    REQUIRE(one[s].time_s);
    CHECK(*one[s].time_s <= *one[s].base_time_s);
    CHECK(one[s].seed == 1 + s);
    CHECK(two[s].time_s == one[s].time_s);
    CHECK(two[s].choices == one[s].choices);
    CHECK(one[s].choices.size() % 10 == 0);
    CHECK(one[s].episodes > 1);
  }
}

TEST_CASE("Over rules, one block over the whole episode: the rollout is the fastest single rule") {
  const auto scenario = short_quickstart();
  RolloutOptions options;
  options.block = 100000;
  options.rules = default_actions(ActionBase::kRule);
  options.base_rule = *selectable_rule("goodput-steady:100");
  const std::vector<RolloutOutcome> outcomes =
      hindsight_rollout(scenario, evaluation_start(), 3, 1, options);
  REQUIRE(outcomes.size() == 1);
  const auto rule_time = [&](std::string_view name) {
    EnvOptions env = evaluation_start();
    env.stop_at_target = true;
    BatchSizeEnv batch_env(std::make_shared<FixedScenario>(scenario), env);
    const std::unique_ptr<Policy> policy = make_baseline(std::string(name), 3);
    return run_episode(batch_env, *policy, 3)
        .time_to_target_s.value_or(std::numeric_limits<double>::infinity());
  };
  double fastest = std::numeric_limits<double>::infinity();
  for (std::string_view name : kSelectableRules) fastest = std::min(fastest, rule_time(name));
  REQUIRE(outcomes[0].time_s);
  CHECK(outcomes[0].base_time_s == rule_time("goodput-steady:100"));
  CHECK(*outcomes[0].time_s == fastest);
  CHECK(outcomes[0].episodes == static_cast<int>(kSelectableRules.size()));
}

}  // namespace
}  // namespace dynamix
