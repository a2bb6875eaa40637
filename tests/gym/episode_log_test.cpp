// Rollouts of `dynamix simulate --policy` and their decisions.csv.
#include "gym/episode_log.h"

#include <doctest/doctest.h>

#include <numeric>
#include <sstream>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

std::shared_ptr<const ScenarioSource> short_quickstart() {
  return std::make_shared<FixedScenario>(std::make_shared<const Scenario>(
      load_scenario(kDefaultScenario, {"training.budget_epochs=1"})));
}

TEST_CASE("--policy accepts static:B and random and rejects anything else") {
  CHECK(RolloutPolicy::parse("static:256", 1).description() == "static:256");
  CHECK(RolloutPolicy::parse("random", 1).description() == "random");
  CHECK_THROWS_WITH_AS(
      RolloutPolicy::parse("static:0", 1),
      "--policy: expected static:B with B >= 1 samples, or random, found 'static:0'", InputError);
  CHECK_THROWS_AS(RolloutPolicy::parse("static:12x", 1), InputError);
  CHECK_THROWS_AS(RolloutPolicy::parse("ppo", 1), InputError);
}

TEST_CASE("A static rollout keeps every worker at B and logs one row per worker and decision") {
  BatchSizeEnv env(short_quickstart());
  RolloutPolicy policy = RolloutPolicy::parse("static:96", 1);
  DecisionLog log;
  const EpisodeSummary summary = run_episode(env, policy, 3, log);
  CHECK(summary.truncated);
  CHECK(summary.decisions == log.decisions());
  REQUIRE(log.rows().size() == static_cast<std::size_t>(log.decisions()) * env.workers());
  double sum = 0;
  for (const DecisionRow& row : log.rows()) {
    CHECK(row.batch_size == 96);
    CHECK_FALSE(row.action.has_value());
    sum += row.reward / static_cast<double>(env.workers());
  }
  CHECK(summary.episode_return == doctest::Approx(sum).epsilon(1e-6));
  CHECK(log.rows().front().decision == 1);
  CHECK(log.rows().front().iteration == 20);

  std::ostringstream csv;
  log.write_csv(csv);
  const std::string text = csv.str();
  CHECK(text.starts_with("decision,iteration,time_s,worker,batch_size,action,reward\n1,20,"));
  CHECK(std::count(text.begin(), text.end(), '\n') == static_cast<long>(log.rows().size() + 1));
}

TEST_CASE("A random rollout is reproducible from its seed and logs its action indices") {
  const auto rollout = [](std::uint64_t seed) {
    BatchSizeEnv env(short_quickstart());
    RolloutPolicy policy = RolloutPolicy::parse("random", seed);
    DecisionLog log;
    run_episode(env, policy, seed, log);
    std::ostringstream csv;
    log.write_csv(csv);
    for (const DecisionRow& row : log.rows()) {
      REQUIRE(row.action.has_value());
      CHECK(*row.action >= 0);
      CHECK(*row.action < 5);
    }
    return csv.str();
  };
  CHECK(rollout(4) == rollout(4));
  CHECK(rollout(4) != rollout(5));
}

}  // namespace
}  // namespace dynamix
