// Trainer state in checkpoints, and `dynamix export` of a checkpoint.
#include "policies/ppo/checkpoint.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>

#include "policies/export/torchscript_policy.h"
#include "policies/ppo/running_mean_std.h"
#include "sim/core/random.h"
#include "tests/fixtures.h"

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
      .replay = {.seed = 123, .actions = {2, 0, 1, 0, 2, 2, 2, 0}}};
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

TEST_CASE("Checkpoint entries out of range are refused in one short line naming the entry") {
  RunningMeanStd statistics(2);
  statistics.update(std::vector<float>{1, 2, 3, 5}, 2);
  const std::string long_garbage = "[1, 2,\n" + std::string(100000, '7') + "\n, 3]";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"features", "0"},
      {"features", "3"},
      {"features", "-1"},
      {"hidden_sizes", "0"},
      {"hidden_sizes", "-64 64"},
      {"hidden_sizes", "64 x"},
      {"seed", "-1"},
      {"updates", "-1"},
      {"env_steps", "-5"},
      {"environments", "0"},
      {"observation_clip", "-1"},
      {"observation_clip", "nan"},
      {"observation_statistics", "2 0x1p+1 0x1p+0 -0x1p+0 0x1p+0 0x1p+0"},
      {"observation_statistics", long_garbage},
      {"replay_actions", "2 0 1 2 0 9"},
      {"replay_actions", "2 0 1 2 0"},
      {"replay_actions", "2 0 1"},
      {"replay_actions", long_garbage},
      {"policy/bounds.json", R"({"min_batch": 512, "max_batch": 16})"},
      {"policy/bounds.json", R"({"min_batch": 0, "max_batch": 16})"},
      {"policy/bounds.json", "{\n  \"min_batch\": 1,\n  \"max_batch\": \"many\"\n}"},
      {"policy/decision_interval", "0"},
      {"policy/decision_interval", "-3"},
      {"policy/action_base", "sideways\nand more"},
      {"policy/actions.json", "[]"},
      {"policy/actions.json", "[0, 0]"},
      {"policy/actions.json", long_garbage},
      {"policy/schema.json", R"({"local": [], "global": []})"},
      {"policy/schema.json", R"({"features_per_worker": 5, "local": [{}, {}], "global": []})"},
      {"policy/schema.json", long_garbage},
      {"format", "1"},
  };
  for (const auto& [key, value] : cases) {
    CAPTURE(key);
    CAPTURE(value.substr(0, 60));
    CheckpointExtras extras = to_extras(example_state(statistics));
    for (auto& entry : extras) {
      if (entry.first == key) entry.second = value;
    }
    const std::string message = testing::error_of([&] { from_extras(extras, "test.ckpt"); });
    CAPTURE(message);
    CHECK(message.starts_with("test.ckpt: "));
    const std::string entry = key.starts_with("policy/") ? key.substr(7) : key;
    CHECK(message.find(entry) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.size() < 200);
  }
}

TEST_CASE("dynamix export turns a checkpoint into the policy it holds") {
  const auto checkpoint = std::filesystem::temp_directory_path() /
                          ("dynamix_checkpoint_test_" + std::to_string(::getpid()) + ".ckpt");
  const auto policy_file = std::filesystem::temp_directory_path() /
                           ("dynamix_checkpoint_test_" + std::to_string(::getpid()) + ".pt");
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
