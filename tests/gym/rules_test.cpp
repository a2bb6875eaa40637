// The rules and the rule action base: a rule picked by an action decides as the rule itself.
#include "gym/rules.h"

#include <doctest/doctest.h>

#include <string>

#include "gym/env_knobs.h"

namespace dynamix {
namespace {

std::shared_ptr<const ScenarioSource> dynamic_scenario(const std::string& file) {
  return std::make_shared<FixedScenario>(std::make_shared<const Scenario>(
      load_scenario(std::string(DYNAMIX_SOURCE_DIR) + "/scenarios/dynamic/" + file, {})));
}

EnvOptions rule_options() {
  EnvOptions options = evaluation_env_options();
  options.action_base = ActionBase::kRule;
  options.actions = {};
  return options;
}

/// The batches of every decision of an episode in which rule `name` decides by itself.
std::vector<std::vector<int>> alone(const std::shared_ptr<const ScenarioSource>& source,
                                    const std::string& name, std::uint64_t seed) {
  BatchSizeEnv env(source, evaluation_env_options());
  env.reset(seed);
  const std::unique_ptr<Rule> rule = make_rule(name);
  REQUIRE(rule != nullptr);
  rule->begin_episode(env.decision_context());
  std::vector<std::vector<int>> taken;
  std::vector<std::size_t> members = env.members();
  while (!env.episode_over()) {
    if (env.members() != members) {
      members = env.members();
      rule->begin_episode(env.decision_context());
    }
    rule->observe(env.decision_context());
    const StepResult step = env.step_batches(rule->decide(env.decision_context()));
    taken.push_back(step.info.batches);
  }
  return taken;
}

/// The same, with every worker of a rule-base environment picking the rule's action.
std::vector<std::vector<int>> picked(const std::shared_ptr<const ScenarioSource>& source,
                                     std::size_t action, std::uint64_t seed) {
  BatchSizeEnv env(source, rule_options());
  env.reset(seed);
  std::vector<std::vector<int>> taken;
  while (!env.episode_over()) {
    const StepResult step = env.step(std::vector<int>(env.workers(), static_cast<int>(action)));
    CHECK(env.last_rule_choice() == action);
    taken.push_back(step.info.batches);
  }
  return taken;
}

TEST_CASE("Picking one rule all episode long decides exactly as that rule does by itself") {
  // A straggler cluster and an elastic one with notices: the rules differ on both.
  for (const char* file : {"d8_colocated.yaml", "spot16_elastic.yaml"}) {
    const auto source = dynamic_scenario(file);
    for (std::size_t action = 0; action < kSelectableRules.size(); ++action) {
      INFO(file << ": " << kSelectableRules[action]);
      CHECK(picked(source, action, 3) == alone(source, std::string(kSelectableRules[action]), 3));
    }
  }
}

TEST_CASE("The workers' choices meet in the most common one, ties to the first") {
  std::vector<int> votes;
  CHECK(agreed_choice(std::vector<int>{2, 1, 2, 0}, 3, votes) == 2);
  CHECK(agreed_choice(std::vector<int>{2, 1, 1, 2}, 3, votes) == 1);
  CHECK(agreed_choice(std::vector<int>{}, 3, votes) == 0);
}

TEST_CASE("A rule picked later decides on every window so far, from the batches in force") {
  const auto source = dynamic_scenario("d8_colocated.yaml");
  BatchSizeEnv env(source, rule_options());
  env.reset(5);
  const auto proportional = static_cast<int>(*selectable_rule("proportional"));
  const auto straggler = static_cast<int>(*selectable_rule("goodput+straggler"));
  for (int decision = 0; decision < 6 && !env.episode_over(); ++decision) {
    env.step(std::vector<int>(env.workers(), proportional));
  }
  REQUIRE_FALSE(env.episode_over());
  // goodput+straggler, never picked so far, has fitted all six windows and searches its goodput
  // optimum from the batches the proportional rule left in force.
  const std::vector<int> before = env.batches();
  const StepResult step = env.step(std::vector<int>(env.workers(), straggler));
  CHECK(env.last_rule_choice() == static_cast<std::size_t>(straggler));
  CHECK(step.info.batches != before);
}

TEST_CASE("Rule action sets name selectable rules; the first is the neutral action") {
  CHECK(default_actions(ActionBase::kRule).size() == kSelectableRules.size());
  CHECK(invalid_action(ActionBase::kRule, std::vector<int>{0, 6}) == std::nullopt);
  CHECK(invalid_action(ActionBase::kRule, std::vector<int>{0, 7}) == 7);
  CHECK(invalid_action(ActionBase::kRule, std::vector<int>{-1}) == -1);
  CHECK(neutral_action(ActionBase::kRule, std::vector<int>{6, 0}) == 0);
  CHECK(shares_one_action(ActionBase::kRule));
  CHECK(selectable_rule("goodput+straggler") == 6);
  CHECK_FALSE(selectable_rule("static:64").has_value());
  CHECK(make_rule("static:64") == nullptr);
}

}  // namespace
}  // namespace dynamix
