// PPO training on the VectorEnv: determinism, exact resume, refusals, export of the result.
#include "policies/ppo/ppo_trainer.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "gym/env_knobs.h"
#include "policies/ppo/checkpoint.h"
#include "policies/ppo/ppo_policy.h"
#include "tests/fixtures.h"

namespace dynamix {

namespace {

constexpr std::size_t kEnvironments = 2;
const PpoOptions kOptions{
    .seed = 5, .rollout_steps = 8, .epochs = 2, .minibatches = 2, .hidden_sizes = {16, 16}};
// Two updates of 2 environments × 8 decisions each.
constexpr std::int64_t kTwoUpdates = 2 * kEnvironments * 8;

std::shared_ptr<const ScenarioSource> short_episodes() {
  return std::make_shared<FixedScenario>(std::make_shared<const Scenario>(
      load_scenario(kDefaultScenario, {"training.budget_epochs=1"})));
}

std::filesystem::path temporary(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("dynamix_ppo_trainer_test_" + std::to_string(::getpid()) + "_" + name);
}

std::string refusal(PpoTrainer& trainer, const std::filesystem::path& file) {
  try {
    trainer.load_checkpoint(file);
  } catch (const PolicyFileError& error) {
    return error.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("PpoTrainer with the same seed gives the same weights, episodes included") {
  VectorEnv first_envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  VectorEnv second_envs(short_episodes(), evaluation_env_options(), kEnvironments, 2);
  PpoTrainer first(first_envs, kOptions);
  PpoTrainer second(second_envs, kOptions);
  std::int64_t episodes = 0;
  first.train(2 * kTwoUpdates, [&](const UpdateStats& stats) {
    episodes += stats.episodes;
    CHECK(stats.samples > 0);
    CHECK(std::isfinite(stats.losses.value_loss));
    return true;
  });
  second.train(2 * kTwoUpdates);
  CHECK(episodes > 0);
  CHECK(first.updates() == 4);
  CHECK(first.parameters() == second.parameters());
}

TEST_CASE("PpoTrainer with a single explorer trains on one sample per environment and decision") {
  PpoOptions options = kOptions;
  options.single_explorer = true;
  VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  VectorEnv same_envs(short_episodes(), evaluation_env_options(), kEnvironments, 2);
  VectorEnv default_envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  PpoTrainer trainer(envs, options);
  PpoTrainer same(same_envs, options);
  PpoTrainer all_workers(default_envs, kOptions);
  trainer.train(kTwoUpdates, [&](const UpdateStats& stats) {
    // At most 2 environments × 8 decisions, one explorer each (autoreset steps carry none);
    // the default trains on all 8 workers of every decision.
    CHECK(stats.samples > 0);
    CHECK(stats.samples <= static_cast<std::int64_t>(kEnvironments) * 8);
    return true;
  });
  same.train(kTwoUpdates);
  all_workers.train(kTwoUpdates);
  CHECK(trainer.parameters() == same.parameters());
  CHECK(trainer.parameters() != all_workers.parameters());
}

TEST_CASE("PpoTrainer resumed from a checkpoint ends exactly like an uninterrupted run") {
  const std::filesystem::path file = temporary("resume.ckpt");
  VectorEnv uninterrupted_envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  PpoTrainer uninterrupted(uninterrupted_envs, kOptions);
  uninterrupted.train(3 * kTwoUpdates);
  {
    VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
    PpoTrainer interrupted(envs, kOptions);
    interrupted.train(3 * kTwoUpdates, [](const UpdateStats& stats) { return stats.update < 3; });
    CHECK(interrupted.updates() == 3);
    interrupted.save_checkpoint(file);
  }
  VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  PpoTrainer resumed(envs, kOptions);
  resumed.load_checkpoint(file);
  CHECK(resumed.updates() == 3);
  resumed.train(3 * kTwoUpdates);
  CHECK(resumed.updates() == 6);
  CHECK(resumed.env_steps() == uninterrupted.env_steps());
  CHECK(resumed.parameters() == uninterrupted.parameters());
  std::filesystem::remove(file);
}

TEST_CASE("PpoTrainer refuses a checkpoint of another action set, size or network") {
  const std::filesystem::path file = temporary("mismatch.ckpt");
  {
    VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
    PpoTrainer trainer(envs, kOptions);
    trainer.save_checkpoint(file);
  }
  VectorEnv other_actions(
      short_episodes(),
      {.decision_interval = 10, .actions = {-50, 0, 50}, .action_base = ActionBase::kBalanced},
      kEnvironments, 1);
  PpoTrainer with_other_actions(other_actions, kOptions);
  // Every environment option is a setting a resume repeats.
  CHECK(refusal(with_other_actions, file) ==
        file.string() +
            ": --actions: expected '-100 -25 0 25 100' (this checkpoint's run), found '-50 0 50' "
            "(a resume repeats the run's options)");

  VectorEnv current(short_episodes(),
                    {.decision_interval = 10, .action_base = ActionBase::kCurrent}, kEnvironments,
                    1);
  PpoTrainer with_current(current, kOptions);
  CHECK(refusal(with_current, file) ==
        file.string() +
            ": --action-base: expected 'balanced' (this checkpoint's run), found 'current' (a "
            "resume repeats the run's options)");

  VectorEnv three(short_episodes(), evaluation_env_options(), 3, 1);
  PpoTrainer with_three(three, kOptions);
  CHECK(refusal(with_three, file) ==
        file.string() +
            ": --envs: expected '2' (this checkpoint's run), found '3' (a resume repeats the "
            "run's options)");

  VectorEnv same(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  PpoOptions wider = kOptions;
  wider.hidden_sizes = {32};
  PpoTrainer with_wider(same, wider);
  CHECK(refusal(with_wider, file).find("--hidden-sizes: expected '16 16'") != std::string::npos);
  std::filesystem::remove(file);
}

TEST_CASE("PpoTrainer with the same seed writes byte-identical checkpoints and policies") {
  auto bytes = [](const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  std::vector<std::string> checkpoints;
  std::vector<std::string> policies;
  for (int run = 0; run < 2; ++run) {
    // A few allocations between runs: the heap addresses of the second run's tensors differ.
    std::vector<std::unique_ptr<std::vector<float>>> padding;
    padding.reserve(static_cast<std::size_t>(run) * 7);
    for (int i = 0; i < run * 7; ++i) padding.push_back(std::make_unique<std::vector<float>>(99));
    VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
    PpoTrainer trainer(envs, kOptions);
    trainer.train(2 * kTwoUpdates, [](const UpdateStats& stats) { return stats.update < 2; });
    const std::filesystem::path checkpoint = temporary("same_seed.ckpt");
    const std::filesystem::path policy = temporary("same_seed.pt");
    trainer.save_checkpoint(checkpoint);
    trainer.export_policy(policy);
    checkpoints.push_back(bytes(checkpoint));
    policies.push_back(bytes(policy));
    std::filesystem::remove(policy);
    if (run == 0) std::filesystem::remove(checkpoint);
  }
  REQUIRE(checkpoints[0].size() > 1000);
  CHECK(checkpoints[0] == checkpoints[1]);
  CHECK(policies[0] == policies[1]);

  // The optimizer state keyed by parameter index resumes exactly.
  const std::filesystem::path checkpoint = temporary("same_seed.ckpt");
  VectorEnv uninterrupted_envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  PpoTrainer uninterrupted(uninterrupted_envs, kOptions);
  uninterrupted.train(2 * kTwoUpdates);
  VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  PpoTrainer resumed(envs, kOptions);
  resumed.load_checkpoint(checkpoint);
  resumed.train(2 * kTwoUpdates);
  CHECK(resumed.parameters() == uninterrupted.parameters());
  resumed.save_checkpoint(checkpoint);
  // The archive names its entries after the file: the same name in another directory.
  const testing::TempDirectory other;
  const std::filesystem::path again = other.path() / checkpoint.filename();
  uninterrupted.save_checkpoint(again);
  CHECK(bytes(checkpoint) == bytes(again));
  std::filesystem::remove(checkpoint);
}

TEST_CASE("PpoTrainer refuses a checkpoint of a run with other options, naming the option") {
  const std::filesystem::path file = temporary("other_run.ckpt");
  const RunSettings run = {{"scenario", "quickstart"}, {"steps", "64"}};
  {
    VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
    PpoTrainer trainer(envs, kOptions, run);
    trainer.train(kTwoUpdates);
    trainer.save_checkpoint(file);
  }
  VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  PpoOptions other_seed = kOptions;
  other_seed.seed = 6;
  PpoTrainer with_other_seed(envs, other_seed, run);
  CHECK(refusal(with_other_seed, file) ==
        file.string() +
            ": --seed: expected '5' (this checkpoint's run on scenario 'quickstart'), found '6' "
            "(a resume repeats the run's options)");

  PpoOptions other_rate = kOptions;
  other_rate.learning_rate = 3e-4;
  PpoTrainer with_other_rate(envs, other_rate, run);
  CHECK(refusal(with_other_rate, file).find("--learning-rate: expected '0.001'") !=
        std::string::npos);

  PpoTrainer with_other_steps(envs, kOptions, {{"scenario", "quickstart"}, {"steps", "65"}});
  CHECK(refusal(with_other_steps, file).find("--steps: expected '64'") != std::string::npos);

  PpoTrainer on_other_scenario(envs, kOptions, {{"scenario", "big"}, {"steps", "64"}});
  CHECK(refusal(on_other_scenario, file).find("--scenario: expected 'quickstart'") !=
        std::string::npos);

  PpoTrainer same(envs, kOptions, run);
  CHECK(refusal(same, file) == "accepted");
  CHECK(same.updates() == 2);
  std::filesystem::remove(file);
}

TEST_CASE("PpoTrainer refuses options out of range, naming the option") {
  VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  auto refusal_of = [&](auto change) {
    PpoOptions options = kOptions;
    change(options);
    return testing::error_of([&] { PpoTrainer trainer(envs, options); });
  };
  CHECK(refusal_of([](PpoOptions& o) { o.learning_rate = -1; }) ==
        "--learning-rate: expected a finite number > 0, found -1");
  CHECK(refusal_of([](PpoOptions& o) { o.learning_rate = std::nan(""); }) ==
        "--learning-rate: expected a finite number > 0, found nan");
  CHECK(refusal_of([](PpoOptions& o) { o.gamma = 2; }) ==
        "--gamma: expected a number in (0, 1], found 2");
  CHECK(refusal_of([](PpoOptions& o) { o.gamma = 0; }) ==
        "--gamma: expected a number in (0, 1], found 0");
  CHECK(refusal_of([](PpoOptions& o) { o.gae_lambda = 1.5; }) ==
        "--gae-lambda: expected a number in [0, 1], found 1.5");
  CHECK(refusal_of([](PpoOptions& o) { o.initial_hold_probability = 2; }) ==
        "--initial-hold: expected a number in [0, 1), found 2");
  CHECK(refusal_of([](PpoOptions& o) { o.initial_hold_probability = 1; }) ==
        "--initial-hold: expected a number in [0, 1), found 1");
  CHECK(refusal_of([](PpoOptions& o) { o.entropy_coef = -0.01; }) ==
        "--entropy-coef: expected a finite number >= 0, found -0.01");
  CHECK(refusal_of([](PpoOptions& o) { o.rollout_steps = 0; }) ==
        "--rollout-steps: expected an integer in [1, 1048576], found 0");
  CHECK(refusal_of([](PpoOptions& o) {
          o.hidden_sizes = {64, 0};
        }) == "--hidden-sizes: expected an integer in [1, 16384], found 0");
  CHECK(refusal_of([](PpoOptions&) {}) == "no error");
  CHECK(testing::error_of([] { PpoLearner learner(3, 2, {.learning_rate = -1}); }) ==
        "--learning-rate: expected a finite number > 0, found -1");
}

TEST_CASE("A checkpoint with flipped bytes is refused in one short line or loads, never raw") {
  const std::filesystem::path file = temporary("flipped.ckpt");
  std::string original;
  {
    VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
    PpoTrainer trainer(envs, kOptions);
    trainer.train(kTwoUpdates);
    trainer.save_checkpoint(file);
    std::ifstream in(file, std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  REQUIRE(original.size() > 1000);
  int refused = 0;
  for (std::size_t at = 37; at < original.size(); at += original.size() / 23) {
    std::string flipped = original;
    for (std::size_t i = at; i < std::min(at + 16, flipped.size()); ++i) flipped[i] ^= 0x5a;
    std::ofstream(file, std::ios::binary) << flipped;
    VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
    PpoTrainer trainer(envs, kOptions);
    CAPTURE(at);
    try {
      trainer.load_checkpoint(file);
    } catch (const InputError& error) {
      ++refused;
      const std::string message = error.what();
      CAPTURE(message);
      CHECK(message.starts_with(file.string()));
      CHECK(message.find('\n') == std::string::npos);
      CHECK(message.size() < 400);
    }
  }
  CHECK(refused >= 5);
  std::filesystem::remove(file);
}

TEST_CASE("A trained policy exports, re-exports from its checkpoint, and decides batches") {
  const std::filesystem::path checkpoint = temporary("export.ckpt");
  const std::filesystem::path exported = temporary("trained.pt");
  const std::filesystem::path reexported = temporary("reexported.pt");
  VectorEnv envs(short_episodes(), evaluation_env_options(), kEnvironments, 1);
  PpoTrainer trainer(envs, kOptions);
  trainer.train(kTwoUpdates);
  trainer.save_checkpoint(checkpoint);
  trainer.export_policy(exported);
  export_checkpoint(checkpoint, reexported);

  BatchSizeEnv env(short_episodes(), evaluation_env_options());
  const ResetResult reset = env.reset(77);
  PpoPolicy policy(exported, env.schema(), env.options());
  const TorchScriptPolicy again(reexported);
  CHECK(policy.module().logits(reset.observation) == again.logits(reset.observation));

  policy.begin_episode(env.decision_context());
  const std::vector<int> batches = policy.decide(env.decision_context(), reset.observation);
  const std::vector<int> greedy = policy.module().greedy_actions(reset.observation);
  REQUIRE(batches.size() == env.workers());
  // The batches are the env's step(greedy) batches before clamping.
  StepResult step;
  env.step(greedy, step);
  for (std::size_t i = 0; i < batches.size(); ++i) {
    if (!step.info.clamped[i]) CHECK(step.info.batches[i] == batches[i]);
  }

  CHECK_THROWS_WITH_AS(
      PpoPolicy(
          exported, env.schema(),
          {.decision_interval = 10, .actions = {-1, 1}, .action_base = ActionBase::kBalanced}),
      doctest::Contains("actions.json: expected [-1, 1]"), PolicyFileError);
  std::filesystem::remove(checkpoint);
  std::filesystem::remove(exported);
  std::filesystem::remove(reexported);
}

TEST_CASE("A policy trained on balanced bases decides the batches its environment would set") {
  const std::filesystem::path exported = temporary("balanced.pt");
  const EnvOptions options{.decision_interval = 10, .action_base = ActionBase::kBalanced};
  VectorEnv envs(short_episodes(), options, kEnvironments, 1);
  PpoTrainer trainer(envs, kOptions);
  trainer.train(kTwoUpdates);
  trainer.export_policy(exported);

  // The policy applies its own base, whatever the evaluating environment's option.
  BatchSizeEnv evaluated(short_episodes(),
                         {.decision_interval = 10, .action_base = ActionBase::kCurrent});
  BatchSizeEnv trained(short_episodes(), options);
  const ResetResult reset = evaluated.reset(78);
  trained.reset(78);
  PpoPolicy policy(exported, evaluated.schema(), evaluated.options());
  CHECK(policy.module().metadata().action_base == ActionBase::kBalanced);
  policy.begin_episode(evaluated.decision_context());
  const std::vector<int> initial = evaluated.batches();
  const std::vector<int> batches = policy.decide(evaluated.decision_context(), reset.observation);
  const StepResult step = trained.step(policy.module().greedy_actions(reset.observation));
  CHECK(step.info.batches == evaluated.step_batches(batches).info.batches);
  CHECK(batches != initial);  // rebalanced: the quickstart mixes GPU speeds
  std::filesystem::remove(exported);
}

TEST_CASE("PpoTrainer learns from environments with different worker counts") {
  SamplerOptions sampler{.min_workers = 2, .max_workers = 6};
  VectorEnv envs(std::make_shared<ScenarioSampler>(sampler), evaluation_env_options(), 3, 1);
  PpoTrainer trainer(envs, {.seed = 2, .rollout_steps = 3, .epochs = 1, .minibatches = 2});
  std::int64_t samples = 0;
  trainer.train(std::int64_t{2} * 3 * 3, [&](const UpdateStats& stats) {
    samples += stats.samples;
    return true;
  });
  CHECK(trainer.updates() == 2);
  CHECK(samples >= 2 * 3 * 3 * 2);
}

TEST_CASE("PpoTrainer learns through preemptions, whose steps change the worker count") {
  const std::string path =
      std::string(DYNAMIX_SOURCE_DIR) + "/scenarios/dynamic/spot16_elastic.yaml";
  // Many notices and a short budget: episodes end, and rollouts are cut, across changes.
  const auto scenario = std::make_shared<const Scenario>(
      load_scenario(path, {"preemption.rate_per_hour=120", "preemption.reconfiguration_s=1",
                           "training.budget_time_s=40"}));
  VectorEnv envs(std::make_shared<FixedScenario>(scenario), evaluation_env_options(), 2, 1);
  PpoTrainer trainer(envs, {.seed = 3, .rollout_steps = 8, .epochs = 1, .minibatches = 2});
  std::int64_t episodes = 0;
  trainer.train(std::int64_t{6} * 2 * 8, [&](const UpdateStats& stats) {
    episodes += stats.episodes;
    CHECK(std::isfinite(stats.losses.value_loss));
    CHECK(std::isfinite(stats.losses.policy_loss));
    return true;
  });
  CHECK(trainer.updates() == 6);
  CHECK(episodes > 0);
}

}  // namespace dynamix
