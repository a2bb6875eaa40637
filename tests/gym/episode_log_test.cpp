// decisions.csv: one row per worker and decision, with the episode return.
#include "gym/episode_log.h"

#include <doctest/doctest.h>

#include <sstream>

namespace dynamix {
namespace {

std::shared_ptr<const ScenarioSource> short_quickstart() {
  return std::make_shared<FixedScenario>(std::make_shared<const Scenario>(
      load_scenario(kDefaultScenario, {"training.budget_epochs=1"})));
}

TEST_CASE("DecisionLog writes one row per worker and decision and sums the mean rewards") {
  BatchSizeEnv env(short_quickstart());
  env.reset(3, {.initial_batch = 96});
  DecisionLog log;
  StepResult step;
  const std::vector<int> batches(env.workers(), 96);
  const std::vector<int> actions(env.workers(), 2);
  double expected_return = 0;
  int decisions = 0;
  while (!env.episode_over()) {
    env.step_batches(batches, step);
    log.record(step, decisions % 2 == 0 ? std::span<const int>(actions) : std::span<const int>());
    double mean = 0;
    for (float reward : step.rewards) mean += reward / static_cast<double>(env.workers());
    expected_return += mean;
    ++decisions;
  }
  CHECK(log.decisions() == decisions);
  CHECK(log.episode_return() == doctest::Approx(expected_return).epsilon(1e-9));
  REQUIRE(log.rows().size() == static_cast<std::size_t>(decisions) * env.workers());
  CHECK(log.rows().front().decision == 1);
  CHECK(log.rows().front().iteration == 20);
  CHECK(log.rows().front().action == 2);
  CHECK_FALSE(log.rows()[env.workers()].action.has_value());
  for (const DecisionRow& row : log.rows()) CHECK(row.batch_size == 96);

  std::ostringstream csv;
  log.write_csv(csv);
  const std::string text = csv.str();
  CHECK(text.starts_with("decision,iteration,time_s,worker,batch_size,action,reward\n1,20,"));
  CHECK(std::count(text.begin(), text.end(), '\n') == static_cast<long>(log.rows().size() + 1));
}

}  // namespace
}  // namespace dynamix
