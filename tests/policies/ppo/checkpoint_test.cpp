// Trainer state in checkpoints, and `dynamix export` of a checkpoint.
#include "policies/ppo/checkpoint.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "policies/export/torchscript_policy.h"
#include "policies/ppo/running_mean_std.h"
#include "sim/core/random.h"

namespace dynamix {

namespace {

TrainerState example_state(const RunningMeanStd& statistics) {
  return {
      .environment = {.schema_json = R"({"local": [{"name": "a"}, {"name": "b"}], "global": []})",
                      .actions = {-25, 0, 25},
                      .min_batch = 16,
                      .max_batch = 512,
                      .decision_interval = 5},
      .features = 2,
      .hidden_sizes = {8},
      .seed = 42,
      .updates = 7,
      .env_steps = 700,
      .observation_statistics = statistics.serialize(),
      .observation_clip = 5.5f,
      .environments = 2,
      .replay = {.seed = 123, .actions = {2, 0, 1, 0, 2, 2, 2}}};
}

}  // namespace

TEST_CASE("Trainer state survives a round trip through checkpoint extras") {
  RunningMeanStd statistics(2);
  statistics.update(std::vector<float>{1, 2, 3, 5}, 2);
  const TrainerState state = example_state(statistics);
  const TrainerState restored = from_extras(to_extras(state), "test.ckpt");
  CHECK(restored.environment.actions == state.environment.actions);
  CHECK(restored.environment.schema_json == state.environment.schema_json);
  CHECK(restored.environment.decision_interval == 5);
  CHECK(restored.features == 2);
  CHECK(restored.hidden_sizes == state.hidden_sizes);
  CHECK(restored.seed == 42);
  CHECK(restored.updates == 7);
  CHECK(restored.env_steps == 700);
  CHECK(restored.observation_statistics == state.observation_statistics);
  CHECK(restored.observation_clip == 5.5f);
  CHECK(restored.environments == 2);
  CHECK(restored.replay.seed == 123);
  CHECK(restored.replay.actions == state.replay.actions);

  CheckpointExtras broken = to_extras(state);
  std::erase_if(broken, [](const auto& entry) { return entry.first == "updates"; });
  CHECK_THROWS_WITH_AS(from_extras(broken, "test.ckpt"),
                       "test.ckpt: updates: expected this entry in the checkpoint, found none",
                       PolicyFileError);
}

TEST_CASE("dynamix export turns a checkpoint into the policy it holds") {
  const auto checkpoint = std::filesystem::temp_directory_path() / "dynamix_checkpoint_test.ckpt";
  const auto policy_file = std::filesystem::temp_directory_path() / "dynamix_checkpoint_test.pt";
  RunningMeanStd statistics(2);
  statistics.update(std::vector<float>{1, 200, 3, 500, -4, 0}, 3);
  const TrainerState state = example_state(statistics);
  PpoLearner learner(2, 3, {.seed = 9, .hidden_sizes = {8}});
  learner.save(checkpoint, to_extras(state));
  export_checkpoint(checkpoint, policy_file);

  const TorchScriptPolicy policy(policy_file);
  CHECK(policy.metadata().actions == state.environment.actions);
  CHECK(policy.metadata().max_batch == 512);
  const Observation observation{3, 2, {0.5f, 100, 2, 900, -3, 1}};
  std::vector<float> normalized(6);
  statistics.normalize(observation.values, normalized, 5.5f);
  CHECK(policy.logits(observation) == learner.logits(normalized));
  std::filesystem::remove(checkpoint);
  std::filesystem::remove(policy_file);
}

}  // namespace dynamix
