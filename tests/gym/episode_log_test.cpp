// decisions.csv: one row per worker and decision, columns that each mean one thing, and the
// episode return.
#include "gym/episode_log.h"

#include <doctest/doctest.h>

#include <sstream>

#include "gym/env_knobs.h"

namespace dynamix {
namespace {

std::shared_ptr<const ScenarioSource> short_quickstart() {
  return std::make_shared<FixedScenario>(std::make_shared<const Scenario>(
      load_scenario(kDefaultScenario, {"training.budget_epochs=1"})));
}

TEST_CASE("DecisionLog writes one row per worker and decision and sums the mean rewards") {
  BatchSizeEnv env(short_quickstart(), evaluation_env_options());
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
  CHECK(log.rows()[env.workers()].action == -1);
  for (const DecisionRow& row : log.rows()) {
    CHECK(row.batch_size == 96);
    CHECK(row.requested_batch == 96);
    CHECK(row.hold);
    CHECK_FALSE(row.clamped);
    CHECK(row.global_batch == 96 * static_cast<std::int64_t>(env.workers()));
  }

  std::ostringstream csv;
  log.write_csv(csv);
  const std::string text = csv.str();
  CHECK(
      text.starts_with("decision,iteration,time_s,worker,action,previous_batch,"
                       "requested_batch,batch_size,clamped,hold,global_batch,reward\n1,20,"));
  CHECK(std::count(text.begin(), text.end(), '\n') == static_cast<long>(log.rows().size() + 1));
  CHECK(text.find(",,") == std::string::npos);
}

TEST_CASE("DecisionLog tells the request, the clamped batch, a hold and the global batch apart") {
  BatchSizeEnv env(short_quickstart(), evaluation_env_options());
  env.reset(3, {.initial_batch = 64});
  const std::size_t p = env.workers();
  DecisionLog log;
  StepResult step;
  // Worker 0 asks for far more than the batch bound, worker 1 grows, the others hold.
  std::vector<int> requested(p, 64);
  requested[0] = 1'000'000;
  requested[1] = 96;
  log.request(env.batches(), requested);
  env.step_batches(requested, step);
  log.record(step, {});
  // Without a request, the next decision takes the request to be what ran.
  env.step_batches(step.info.batches, step);
  log.record(step, {});

  REQUIRE(log.rows().size() == 2 * p);
  const DecisionRow& big = log.rows()[0];
  CHECK(big.previous_batch == 64);
  CHECK(big.requested_batch == 1'000'000);
  CHECK(big.batch_size == env.options().max_batch);
  CHECK(big.clamped);
  CHECK_FALSE(big.hold);
  const DecisionRow& grown = log.rows()[1];
  CHECK(grown.batch_size == 96);
  CHECK_FALSE(grown.clamped);
  CHECK_FALSE(grown.hold);
  CHECK(log.rows()[2].hold);
  const std::int64_t global = env.options().max_batch + 96 + 64 * static_cast<std::int64_t>(p - 2);
  for (std::size_t w = 0; w < p; ++w) {
    CHECK(log.rows()[w].global_batch == global);
    CHECK(log.rows()[w].action == -1);
    CHECK(log.rows()[p + w].hold);
    CHECK(log.rows()[p + w].previous_batch == log.rows()[w].batch_size);
  }
}

}  // namespace
}  // namespace dynamix
