// The fixed point as a policy file: a snapshot whose output layer always takes one action keeps
// the network and metadata, and takes that action in C++ and in Python whatever it observes.
#include "policies/export/policy_snapshot.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "dynamix_config.h"
#include "policies/export/torchscript_policy.h"
#include "sim/core/random.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::TempDirectory;

constexpr std::size_t kWorkers = 64;
constexpr std::size_t kFeatures = 4;
constexpr const char* kSchema =
    R"({"version": 1, "local": [{"name": "batch_size", "unit": "samples"}, )"
    R"({"name": "throughput_gbps", "unit": "Gb/s"}], )"
    R"("global": [{"name": "validation_accuracy", "unit": "1"}, {"name": "progress", "unit": "1"}]})";
const std::vector<int> kGoodputActions = {50, 71, 100, 141, 200};
constexpr std::size_t kNeutral = 2;

DenseLayer random_layer(Rng& rng, std::size_t inputs, std::size_t outputs) {
  DenseLayer layer{.inputs = inputs, .outputs = outputs, .weight = {}, .bias = {}};
  for (std::size_t i = 0; i < inputs * outputs; ++i) {
    layer.weight.push_back(static_cast<float>(rng.normal()));
  }
  for (std::size_t i = 0; i < outputs; ++i) layer.bias.push_back(static_cast<float>(rng.normal()));
  return layer;
}

/// A goodput-base policy with random weights and normalization: its greedy actions vary.
PolicySnapshot random_snapshot() {
  Rng rng(7, stream_id("test.snapshot"));
  PolicySnapshot snapshot;
  snapshot.metadata = {.schema_json = kSchema,
                       .actions = kGoodputActions,
                       .action_base = ActionBase::kGoodput,
                       .min_batch = 16,
                       .max_batch = 4096,
                       .decision_interval = 20};
  for (std::size_t f = 0; f < kFeatures; ++f) {
    snapshot.observation_mean.push_back(static_cast<float>(rng.uniform(-1, 1)));
    snapshot.observation_std.push_back(static_cast<float>(rng.uniform(0.5, 2)));
  }
  snapshot.layers = {random_layer(rng, kFeatures, 16), random_layer(rng, 16, 16),
                     random_layer(rng, 16, kGoodputActions.size())};
  return snapshot;
}

/// Rows of every kind a window can give: ordinary, huge, tiny, negative, zero.
Observation varied_observation(std::uint64_t seed) {
  Rng rng(seed, stream_id("test.observation"));
  constexpr float kExtremes[] = {0.f, -1e30f, 1e30f, std::numeric_limits<float>::min()};
  Observation observation{kWorkers, kFeatures, {}};
  for (std::size_t i = 0; i < kWorkers * kFeatures; ++i) {
    observation.values.push_back(i % 7 == 0 ? kExtremes[(i / 7) % 4]
                                            : static_cast<float>(rng.uniform(-50, 500)));
  }
  return observation;
}

bool python_has_torch() {
  return std::system(DYNAMIX_PYTHON " -c 'import torch' > /dev/null 2>&1") == 0;
}

/// The greedy actions Python's torch.jit.load gives for `observation` with each of `files`, all
/// in one check_policy.py: importing torch takes about a CPU-second. nullopt when
/// DYNAMIX_PYTHON cannot import torch.
std::optional<std::vector<std::vector<int>>> python_actions(
    const std::vector<std::filesystem::path>& files, const Observation& observation,
    const TempDirectory& work) {
  std::ostringstream rows;
  for (std::size_t w = 0; w < observation.workers; ++w) {
    for (std::size_t f = 0; f < observation.features; ++f) {
      char text[64];
      std::snprintf(text, sizeof text, "%a ", observation.values[w * observation.features + f]);
      rows << text;
    }
    rows << '\n';
  }
  const std::string observations = work.write("observations.txt", rows.str());
  const auto output = [&work](std::size_t i) { return work / ("output" + std::to_string(i)); };
  std::string command = std::string(DYNAMIX_PYTHON " ") + DYNAMIX_SOURCE_DIR +
                        "/tests/policies/export/check_policy.py";
  for (std::size_t i = 0; i < files.size(); ++i) {
    command += ' ';
    command += files[i].string();
    command += ' ';
    command += observations;
    command += ' ';
    command += output(i);
  }
  if (std::system(command.c_str()) != 0) {
    REQUIRE_FALSE(python_has_torch());
    return std::nullopt;
  }
  std::vector<std::vector<int>> actions;
  for (std::size_t i = 0; i < files.size(); ++i) {
    std::ifstream in(output(i));
    std::string label;
    in >> label;
    REQUIRE(label == "actions");
    actions.emplace_back(observation.workers);
    for (int& action : actions.back()) in >> action;
  }
  return actions;
}

}  // namespace

TEST_CASE("A constant-action snapshot takes its action whatever it observes, metadata kept") {
  TempDirectory work;
  const PolicySnapshot snapshot = random_snapshot();
  const std::filesystem::path trained = work.path() / "trained.pt";
  const std::filesystem::path fixed_point = work.path() / "fixed_point.pt";
  save_torchscript_policy(snapshot, trained);
  save_torchscript_policy(constant_action_snapshot(snapshot, kNeutral), fixed_point);
  const TorchScriptPolicy before(trained);
  const TorchScriptPolicy after(fixed_point);
  // The random network departs from the neutral action somewhere; the fixed point never does.
  const std::vector<int> neutral(kWorkers, static_cast<int>(kNeutral));
  CHECK(before.greedy_actions(varied_observation(1)) != neutral);
  std::vector<float> expected_logits;
  for (std::size_t w = 0; w < kWorkers; ++w) {
    for (std::size_t a = 0; a < kGoodputActions.size(); ++a) {
      expected_logits.push_back(a == kNeutral ? 0.f : -kConstantActionMargin);
    }
  }
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    CAPTURE(seed);
    CHECK(after.greedy_actions(varied_observation(seed)) == neutral);
    CHECK(after.logits(varied_observation(seed)) == expected_logits);
  }
  CHECK(after.metadata().schema_json == snapshot.metadata.schema_json);
  CHECK(after.metadata().actions == kGoodputActions);
  CHECK(after.metadata().action_base == ActionBase::kGoodput);
  CHECK(after.metadata().decision_interval == 20);
  CHECK(after.metadata().min_batch == 16);
  CHECK(after.metadata().max_batch == 4096);
  CHECK(after.observation_std() == before.observation_std());
  const auto python = python_actions({fixed_point, trained}, varied_observation(6), work);
  if (!python) {
    MESSAGE("Python check skipped: " DYNAMIX_PYTHON " cannot import torch");
    return;
  }
  CHECK((*python)[0] == neutral);
  CHECK((*python)[1] != neutral);
}

}  // namespace dynamix
