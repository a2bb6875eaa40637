// BatchSizeEnv: Gymnasium semantics, determinism, clamping and misuse.
#include "gym/batch_size_env.h"

#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>

#include "gym/env_knobs.h"

namespace dynamix {
namespace {

std::shared_ptr<const ScenarioSource> quickstart(const std::vector<std::string>& overrides = {}) {
  return std::make_shared<FixedScenario>(
      std::make_shared<const Scenario>(load_scenario(kDefaultScenario, overrides)));
}

std::string env_error(const std::function<void()>& misuse) {
  try {
    misuse();
  } catch (const EnvError& error) {
    return error.what();
  }
  return "no error";
}

TEST_CASE("reset with the same seed gives the same observation; another seed another") {
  BatchSizeEnv a(quickstart(), evaluation_env_options()), b(quickstart(), evaluation_env_options());
  const ResetResult first = a.reset(11);
  const ResetResult again = b.reset(11);
  CHECK(first.observation.values == again.observation.values);
  CHECK(first.info.time_s == again.info.time_s);
  CHECK(first.info.iteration == 10);
  CHECK(first.info.decision == 0);
  CHECK(a.reset(12).observation.values != first.observation.values);
  CHECK(a.reset(11).observation.values == first.observation.values);
}

TEST_CASE("step with the same seed and actions gives the same results") {
  BatchSizeEnv a(quickstart(), evaluation_env_options()), b(quickstart(), evaluation_env_options());
  a.reset(4);
  b.reset(4);
  std::vector<int> actions(a.workers());
  for (int decision = 0; decision < 25; ++decision) {
    for (std::size_t w = 0; w < actions.size(); ++w)
      actions[w] = (decision + static_cast<int>(w)) % 5;
    const StepResult x = a.step(actions);
    const StepResult y = b.step(actions);
    REQUIRE(x.observation.values == y.observation.values);
    REQUIRE(x.rewards == y.rewards);
    REQUIRE(x.info.batches == y.info.batches);
    REQUIRE(x.info.time_s == y.info.time_s);
    CHECK(x.info.decision == decision + 1);
  }
}

TEST_CASE("A decision moves each worker's batch by its action and runs k iterations") {
  EnvOptions options = evaluation_env_options();
  options.decision_interval = 7;
  options.action_base = ActionBase::kCurrent;
  BatchSizeEnv env(quickstart(), options);
  env.reset(1, {.initial_batch = 200});
  CHECK(env.run().iterations() == 7);
  std::vector<int> actions(env.workers(), 2);
  actions[0] = 0;
  actions[1] = 4;
  actions[2] = 1;
  const StepResult step = env.step(actions);
  CHECK(step.info.iteration == 14);
  CHECK(step.info.batches[0] == 100);
  CHECK(step.info.batches[1] == 300);
  CHECK(step.info.batches[2] == 175);
  CHECK(step.info.batches[3] == 200);
  CHECK(step.rewards.size() == env.workers());
  CHECK(env.window().workers[1].batch_size == 300);
}

TEST_CASE("With one window of lag a decision applies to the window after the next") {
  EnvOptions options = evaluation_env_options();
  options.decision_lag = 1;
  BatchSizeEnv env(quickstart(), options);
  env.reset(1, {.initial_batch = 64});
  const std::vector<int> first(env.workers(), 128);
  const std::vector<int> second(env.workers(), 96);
  env.step_batches(first);
  CHECK(env.window().workers[0].batch_size == 64);  // the deployed job still ran the old batches
  env.step_batches(second);
  CHECK(env.window().workers[0].batch_size == 128);
  env.step_batches(second);
  CHECK(env.window().workers[0].batch_size == 96);
  options.decision_lag = 2;
  CHECK(env_error([&] { BatchSizeEnv(quickstart(), options); }) ==
        "decision_lag: expected 0 or 1 windows, found 2");
}

TEST_CASE("With serve's guard rail a decision's global batch moves at most c-fold a window") {
  EnvOptions options = evaluation_env_options();
  options.max_batch_change = 2;
  BatchSizeEnv env(quickstart(), options);
  env.reset(1, {.initial_batch = 64});
  const std::vector<int> eightfold(env.workers(), 512);
  const StepResult first = env.step_batches(eightfold);
  CHECK(env.window().workers[0].batch_size == 128);  // 2x the 64 that ran, not 8x
  CHECK(first.info.clamped[0]);
  env.step_batches(eightfold);
  CHECK(env.window().workers[0].batch_size == 256);
  env.step_batches(std::vector<int>(env.workers(), 200));  // within 2x: as asked
  CHECK(env.window().workers[0].batch_size == 200);
  options.max_batch_change = 0;  // none: the batch jumps at once
  BatchSizeEnv free(quickstart(), options);
  free.reset(1, {.initial_batch = 64});
  free.step_batches(eightfold);
  CHECK(free.window().workers[0].batch_size == 512);
  options.max_batch_change = 0.5;
  CHECK(env_error([&] { BatchSizeEnv(quickstart(), options); }) ==
        "max_batch_change: expected 0 (none) or a finite factor >= 1, found 0.500000");
}

TEST_CASE("With serve's LR guard rail the LR factor moves at most c-fold a window") {
  EnvOptions options = evaluation_env_options();
  options.max_lr_change = 2;
  BatchSizeEnv env(quickstart(), options);
  env.reset(1, {.initial_batch = 64});
  REQUIRE(env.run().training_options().lr_rule == LrRule::kLinear);
  const double reference = env.run().workload().statistics.reference_batch;
  // The linear rule's factor for the global batch that ran in the last window.
  const auto rule = [reference](const BatchSizeEnv& e) {
    double global = 0;
    for (const WorkerWindow& worker : e.window().workers) global += worker.batch_size;
    return global / reference;
  };
  const double first = rule(env);
  CHECK(env.run().lr_factor() == doctest::Approx(first));
  const std::vector<int> eightfold(env.workers(), 512);
  env.step_batches(eightfold);
  CHECK(env.window().workers[0].batch_size == 512);  // the batch is not bounded, the LR is
  CHECK(rule(env) > 4 * first);
  CHECK(env.run().lr_factor() == doctest::Approx(2 * first));
  env.step_batches(eightfold);
  CHECK(env.run().lr_factor() == doctest::Approx(4 * first));
  env.step_batches(eightfold);
  CHECK(env.run().lr_factor() == doctest::Approx(rule(env)));  // caught up with the rule

  // One window of lag: a decision's bound is the factor in force when it was decided.
  options.decision_lag = 1;
  BatchSizeEnv lagged(quickstart(), options);
  lagged.reset(1, {.initial_batch = 64});
  for (const double times : {1, 2, 2, 4}) {
    lagged.step_batches(eightfold);
    CHECK(lagged.run().lr_factor() == doctest::Approx(times * first));
  }

  options.max_lr_change = 0;  // none: the LR follows the rule at once
  options.decision_lag = 0;
  BatchSizeEnv free(quickstart(), options);
  free.reset(1, {.initial_batch = 64});
  free.step_batches(eightfold);
  CHECK(free.run().lr_factor() == doctest::Approx(rule(free)));
  options.max_lr_change = 0.5;
  CHECK(env_error([&] { BatchSizeEnv(quickstart(), options); }) ==
        "max_lr_change: expected 0 (none) or a finite factor >= 1, found 0.500000");
}

TEST_CASE("Batches are clamped to the bounds and to memory, and the clamping is reported") {
  BatchSizeEnv env(quickstart(), {.decision_interval = 10, .action_base = ActionBase::kCurrent});
  env.reset(1, {.initial_batch = 50});
  std::vector<int> down(env.workers(), 0);
  StepResult step = env.step(down);
  for (std::size_t w = 0; w < env.workers(); ++w) {
    CHECK(step.info.batches[w] == 32);
    CHECK(step.info.clamped[w]);
  }
  const std::vector<int> stay(env.workers(), 2);
  step = env.step(stay);
  CHECK_FALSE(step.info.clamped[0]);

  EnvOptions huge = evaluation_env_options();
  huge.max_batch = 1 << 20;
  huge.actions = {1 << 20};
  BatchSizeEnv unbounded(quickstart(), huge);
  unbounded.reset(1);
  step = unbounded.step(std::vector<int>(unbounded.workers(), 0));
  for (std::size_t w = 0; w < unbounded.workers(); ++w) {
    CHECK(step.info.batches[w] == unbounded.run().max_batch(w));
    CHECK(step.info.clamped[w]);
  }
}

TEST_CASE("Reaching the target terminates; a spent budget truncates") {
  BatchSizeEnv easy(quickstart({"training.target_accuracy=0.3"}), evaluation_env_options());
  easy.reset(2);
  StepResult step;
  const std::vector<int> stay(easy.workers(), 2);
  while (!easy.episode_over()) easy.step(stay, step);
  CHECK(step.terminated);
  CHECK_FALSE(step.truncated);
  REQUIRE(step.info.time_to_target_s.has_value());
  CHECK(*step.info.time_to_target_s == doctest::Approx(step.info.time_s));
  CHECK(step.info.validation_accuracy >= 0.3);

  BatchSizeEnv hard(quickstart({"training.target_accuracy=0.99", "training.budget_epochs=2"}),
                    evaluation_env_options());
  hard.reset(2);
  while (!hard.episode_over()) hard.step(stay, step);
  CHECK(step.truncated);
  CHECK_FALSE(step.terminated);
  CHECK_FALSE(step.info.time_to_target_s.has_value());
  CHECK(step.info.epochs >= 2);
  // The miss is charged: the last reward is far below the ones before it.
  CHECK(step.rewards[0] < -0.1);
}

TEST_CASE("Without stop_at_target the episode runs on to the budget and is not charged a miss") {
  EnvOptions options = evaluation_env_options();
  options.stop_at_target = false;
  BatchSizeEnv env(quickstart({"training.target_accuracy=0.3", "training.budget_epochs=3"}),
                   options);
  env.reset(2);
  StepResult step;
  const std::vector<int> stay(env.workers(), 2);
  while (!env.episode_over()) {
    env.step(stay, step);
    CHECK_FALSE(step.terminated);
  }
  CHECK(step.truncated);
  CHECK(step.info.epochs >= 3);
  REQUIRE(step.info.time_to_target_s.has_value());
  CHECK(*step.info.time_to_target_s < step.info.time_s);
  CHECK(step.rewards[0] > -0.1);
}

TEST_CASE("Misuse of the environment is an EnvError with a clear message") {
  BatchSizeEnv env(quickstart({"training.budget_epochs=1"}), evaluation_env_options());
  CHECK(env_error([&] { env.step(std::vector<int>(8, 2)); }) ==
        "step: the environment has not been reset; call reset(seed) first");
  env.reset(1);
  CHECK(env_error([&] { env.step(std::vector<int>(7, 2)); }) ==
        "step: expected 8 action indices (one per worker), found 7");
  std::vector<int> actions(8, 2);
  actions[3] = 5;
  CHECK(env_error([&] { env.step(actions); }) ==
        "step: action index 5 for worker 3 is outside the action set [0, 5)");
  actions[3] = -1;
  CHECK(env_error([&] { env.step(actions); }).starts_with("step: action index -1 for worker 3"));
  CHECK(env_error([&] { env.step_batches(std::vector<int>(8, 0)); }) ==
        "step_batches: batch 0 for worker 0: expected >= 1 sample");
  CHECK(
      env_error([&] { env.reset(1, {.initial_batch = -4}); }).starts_with("reset: initial_batch"));
  while (!env.episode_over()) env.step(std::vector<int>(8, 2));
  CHECK(env_error([&] { env.step(std::vector<int>(8, 2)); }) ==
        "step: the episode has ended (terminated or truncated); call reset(seed)");
  env.reset(2);
  CHECK_NOTHROW(env.step(std::vector<int>(8, 2)));
}

TEST_CASE("Invalid options are an EnvError naming the option") {
  const auto make = [](EnvOptions options) {
    return env_error([&] { BatchSizeEnv env(quickstart(), options); });
  };
  CHECK(make({.decision_interval = 0}) == "decision_interval: expected k >= 1 iterations, found 0");
  CHECK(make({.actions = {-50, 0}, .action_base = ActionBase::kNoise}) ==
        "actions: expected percentages of the noise scale above 0, found -50");
  CHECK(make({.min_batch = 0}) == "min_batch: expected >= 1, found 0");
  CHECK(make({.min_batch = 64, .max_batch = 32}) ==
        "max_batch: expected >= min_batch (64), found 32");
  CHECK(make({.initial_batch = -1}).starts_with("initial_batch"));
  EnvOptions bad_scale = evaluation_env_options();
  bad_scale.reward.time_scale_s = -1;
  CHECK(make(bad_scale).starts_with("reward.time_scale_s"));
  for (const double discount : {0.0, 1.5, std::nan("")}) {
    EnvOptions bad_discount = evaluation_env_options();
    bad_discount.reward.shaping_discount = discount;
    CHECK(make(bad_discount).starts_with("reward.shaping_discount: expected a number in (0, 1]"));
  }
  CHECK(env_error([] {
          BatchSizeEnv env(nullptr);
        }).starts_with("BatchSizeEnv: expected a scenario"));
}

TEST_CASE("Reward scales do not depend on the batch an episode starts at") {
  BatchSizeEnv env(quickstart(), evaluation_env_options());
  env.reset(3);
  const RewardOptions reference = env.reward_options();
  CHECK(reference.time_scale_s > 0);
  CHECK(reference.miss_time_s > 0);
  env.reset(3, {.initial_batch = 1024});
  CHECK(env.reward_options().time_scale_s == reference.time_scale_s);
  CHECK(env.reward_options().miss_time_s == reference.miss_time_s);
}

TEST_CASE("A discounted shaping pays gamma^n times the new accuracy less the old") {
  // Per decision (n = 1) and per time_scale_s of simulated time (n = window_s / time_scale_s).
  for (const bool by_time : {false, true}) {
    CAPTURE(by_time);
    EnvOptions discounted = evaluation_env_options();
    discounted.reward.shaping_discount = 0.9;
    discounted.reward.shaping_discount_by_time = by_time;
    BatchSizeEnv plain(quickstart(), evaluation_env_options()), shaped(quickstart(), discounted);
    plain.reset(5);
    shaped.reset(5);
    const std::vector<int> hold(plain.workers(), 2);
    for (int decision = 0; decision < 3; ++decision) {
      const StepResult a = plain.step(hold);
      const StepResult b = shaped.step(hold);
      REQUIRE(a.info.time_s == b.info.time_s);
      const double n = by_time ? b.info.window_s / b.info.time_scale_s : 1.0;
      const double expected = shaped.run().expected_accuracy();
      CHECK(a.rewards[0] - b.rewards[0] ==
            doctest::Approx((1 - std::pow(0.9, n)) * expected).epsilon(1e-4));
    }
  }
}

}  // namespace
}  // namespace dynamix

namespace dynamix {
namespace {

std::shared_ptr<const ScenarioSource> spot_instances() {
  const std::string path =
      std::string(DYNAMIX_SOURCE_DIR) + "/scenarios/dynamic/spot16_elastic.yaml";
  return std::make_shared<FixedScenario>(std::make_shared<const Scenario>(
      load_scenario(path, {"preemption.rate_per_hour=60", "training.budget_time_s=300"})));
}

TEST_CASE("The environment follows preempted workers: rows, actions and rewards per member") {
  BatchSizeEnv env(spot_instances(), evaluation_env_options());
  const ResetResult reset = env.reset(2);
  CHECK(reset.observation.workers == 16);
  bool shrank = false, noticed = false;
  std::size_t deciding = env.workers();
  while (!env.episode_over()) {
    const DecisionContext context = env.decision_context();
    REQUIRE(context.leaving_in_s.size() == env.workers());
    for (double seconds : context.leaving_in_s) noticed = noticed || std::isfinite(seconds);
    const StepResult result = env.step(std::vector<int>(env.workers(), 2));
    // The rewards and batches are the deciding workers'; the observation is the next decision's.
    CHECK(result.rewards.size() == deciding);
    CHECK(result.info.batches.size() == deciding);
    CHECK(result.observation.workers == env.workers());
    CHECK(env.batches().size() == env.workers());
    if (env.workers() != deciding && !env.episode_over()) {
      shrank = shrank || env.workers() < deciding;
      CHECK(env_error([&] {
              env.step(std::vector<int>(deciding, 2));
            }).starts_with("step: expected " + std::to_string(env.workers())));
    }
    deciding = env.workers();
  }
  CHECK(shrank);
  CHECK(noticed);
}

TEST_CASE("Through preemptions the same seed gives the same episode, byte for byte") {
  const auto episode = [](std::uint64_t seed) {
    BatchSizeEnv env(spot_instances(), evaluation_env_options());
    std::vector<float> values = env.reset(seed).observation.values;
    while (!env.episode_over()) {
      const StepResult result = env.step(std::vector<int>(env.workers(), 3));
      values.insert(values.end(), result.observation.values.begin(),
                    result.observation.values.end());
      values.insert(values.end(), result.rewards.begin(), result.rewards.end());
      values.push_back(static_cast<float>(result.info.time_s));
    }
    return values;
  };
  const std::vector<float> first = episode(9);
  CHECK(first == episode(9));
  CHECK(first != episode(10));
}

}  // namespace
}  // namespace dynamix
