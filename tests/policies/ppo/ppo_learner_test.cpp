// The PPO learner: seeded determinism, learning direction, checkpoints.
#include "policies/ppo/ppo_learner.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/core/random.h"
#include "sim/io/input_error.h"

namespace dynamix {

namespace {

constexpr std::size_t kFeatures = 6;
constexpr std::size_t kActions = 5;

/// A rollout under the learner's own policy in which action 0 is always the good one.
Rollout synthetic_rollout(PpoLearner& learner, std::size_t samples, std::uint64_t seed) {
  Rng rng(seed, stream_id("test.rollout"));
  Rollout rollout;
  rollout.observations.resize(samples * kFeatures);
  for (float& x : rollout.observations) x = static_cast<float>(rng.normal());
  rollout.actions.resize(samples);
  rollout.log_probs.resize(samples);
  rollout.values.resize(samples);
  std::vector<double> uniforms(samples);
  for (double& u : uniforms) u = rng.uniform();
  learner.act(rollout.observations, uniforms, rollout.actions, rollout.log_probs, rollout.values);
  for (std::size_t i = 0; i < samples; ++i) {
    const float advantage = rollout.actions[i] == 0 ? 1.0f : -0.25f;
    rollout.advantages.push_back(advantage);
    rollout.returns.push_back(rollout.values[i] + advantage);
  }
  return rollout;
}

double mean_probability_of_action0(PpoLearner& learner, const std::vector<float>& observations) {
  const std::vector<float> logits = learner.logits(observations);
  double total = 0;
  const std::size_t rows = logits.size() / kActions;
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::size_t a = 0; a < kActions; ++a) sum += std::exp(logits[r * kActions + a]);
    total += std::exp(logits[r * kActions]) / sum;
  }
  return total / static_cast<double>(rows);
}

std::vector<float> train(PpoLearner& learner, int updates, std::uint64_t first = 0) {
  for (int u = 0; u < updates; ++u) {
    const Rollout rollout = synthetic_rollout(learner, 257, first + u);
    Rng rng(first + u, stream_id("test.update"));
    learner.update(rollout, 3e-4, rng);
  }
  return learner.parameters();
}

std::filesystem::path temporary(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("dynamix_ppo_learner_test_" + std::to_string(::getpid()) + "_" + name);
}

}  // namespace

TEST_CASE("PpoLearner gives the same weights for the same seed with one thread") {
  PpoLearner first(kFeatures, kActions, {.seed = 3});
  PpoLearner second(kFeatures, kActions, {.seed = 3});
  PpoLearner other(kFeatures, kActions, {.seed = 4});
  CHECK(first.parameters() == second.parameters());
  CHECK(first.parameters() != other.parameters());
  CHECK(train(first, 3) == train(second, 3));
}

TEST_CASE("PpoLearner raises the probability of actions with positive advantage") {
  PpoLearner learner(kFeatures, kActions, {.seed = 5, .learning_rate = 1e-3});
  const Rollout probe = synthetic_rollout(learner, 200, 99);
  const double before = mean_probability_of_action0(learner, probe.observations);
  CHECK(before == doctest::Approx(0.2).epsilon(0.05));
  for (int u = 0; u < 5; ++u) {
    const Rollout rollout = synthetic_rollout(learner, 256, u);
    Rng rng(u, stream_id("test.update"));
    const UpdateLosses losses = learner.update(rollout, 1e-3, rng);
    CHECK(losses.gradient_steps == 16);
    CHECK(losses.entropy > 0);
  }
  CHECK(mean_probability_of_action0(learner, probe.observations) > before + 0.05);
}

TEST_CASE("PpoLearner draws actions by inverse CDF: one uniform number, one action per row") {
  PpoLearner learner(kFeatures, kActions, {.seed = 5, .initial_hold_probability = 0.8}, 2);
  // Two identical rows: equal uniforms give equal actions; the CDF's ends give the first
  // and the last action, the middle the hold action (probability 0.8 around the middle).
  const std::vector<float> rows(2 * kFeatures, 0.5f);
  std::vector<int> actions(2);
  std::vector<float> log_probs(2), values(2);
  for (double u : {0.0, 0.3, 0.5, 0.7, 0.999}) {
    const std::vector<double> uniforms{u, u};
    learner.act(rows, uniforms, actions, log_probs, values);
    CHECK(actions[0] == actions[1]);
    CHECK(log_probs[0] == log_probs[1]);
  }
  learner.act(rows, std::vector<double>{0.0, 0.999}, actions, log_probs, values);
  CHECK(actions == std::vector<int>{0, static_cast<int>(kActions) - 1});
  learner.act(rows, std::vector<double>{0.5, 0.5}, actions, log_probs, values);
  CHECK(actions == std::vector<int>{2, 2});
}

TEST_CASE("PpoLearner acts with log-probabilities and values within float rounding of LibTorch's") {
  PpoLearner learner(kFeatures, kActions, {.seed = 3}, 2);
  Rng rng(11, stream_id("test.update"));
  // Trained a little, so that the forward pass that acts must follow the updated weights.
  learner.update(synthetic_rollout(learner, 256, 4), 1e-2, rng);
  const Rollout probe = synthetic_rollout(learner, 64, 8);
  const std::vector<float> logits = learner.logits(probe.observations);
  std::vector<float> values(probe.size());
  learner.values(probe.observations, values);
  for (std::size_t r = 0; r < probe.size(); ++r) {
    double sum = 0;
    for (std::size_t a = 0; a < kActions; ++a) sum += std::exp(logits[r * kActions + a]);
    const double log_p = logits[r * kActions + probe.actions[r]] - std::log(sum);
    CHECK(probe.log_probs[r] == doctest::Approx(log_p).epsilon(1e-5));
    CHECK(probe.values[r] == values[r]);
  }
}

TEST_CASE("PpoLearner starts the hold action at the initial hold probability") {
  PpoLearner learner(kFeatures, kActions, {.seed = 5, .initial_hold_probability = 0.8}, 2);
  const Rollout probe = synthetic_rollout(learner, 200, 99);
  const std::vector<float> logits = learner.logits(probe.observations);
  const std::size_t rows = logits.size() / kActions;
  double hold = 0, other = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::size_t a = 0; a < kActions; ++a) sum += std::exp(logits[r * kActions + a]);
    hold += std::exp(logits[r * kActions + 2]) / sum / static_cast<double>(rows);
    other += std::exp(logits[r * kActions + 4]) / sum / static_cast<double>(rows);
  }
  CHECK(hold == doctest::Approx(0.8).epsilon(0.02));
  CHECK(other == doctest::Approx(0.05).epsilon(0.1));
}

TEST_CASE("PpoLearner resumed from a checkpoint continues exactly like an uninterrupted run") {
  const PpoOptions options{.seed = 11};
  PpoLearner uninterrupted(kFeatures, kActions, options);
  const std::vector<float> expected = train(uninterrupted, 4);

  const std::filesystem::path file = temporary("resume.ckpt");
  {
    PpoLearner interrupted(kFeatures, kActions, options);
    train(interrupted, 2);
    interrupted.save(file, {{"update", "2"}, {"note", "text\nwith lines"}});
  }
  PpoLearner resumed(kFeatures, kActions, {.seed = 999});
  resumed.load(file);
  CHECK(train(resumed, 2, 2) == expected);

  const CheckpointExtras extras = PpoLearner::read_extras(file);
  REQUIRE(extras.size() == 2);
  CHECK(extras[0] == std::pair<std::string, std::string>{"update", "2"});
  CHECK(extras[1].second == "text\nwith lines");
  std::filesystem::remove(file);
}

TEST_CASE("PpoLearner refuses missing, corrupt and mismatched checkpoints") {
  const std::filesystem::path file = temporary("bad.ckpt");
  PpoLearner learner(kFeatures, kActions, {});
  std::filesystem::remove(file);
  CHECK_THROWS_WITH_AS(learner.load(file), doctest::Contains("no such file"), InputError);

  std::ofstream(file) << "not a checkpoint";
  CHECK_THROWS_WITH_AS(learner.load(file), doctest::Contains("unreadable"), InputError);

  PpoLearner wider(kFeatures, kActions, {.hidden_sizes = {32}});
  wider.save(file, {});
  CHECK_THROWS_WITH_AS(learner.load(file), doctest::Contains("network"), InputError);
  std::filesystem::remove(file);
}

}  // namespace dynamix
