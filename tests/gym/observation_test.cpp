// The observation schema and builder: declared features, bounds, layout, every shipped scenario.
#include "gym/observation.h"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <set>

#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"
#include "sim/core/random.h"

namespace dynamix {
namespace {

void check_within_schema(const Observation& observation, const ObservationSchema& schema) {
  REQUIRE(observation.features == schema.features_per_worker());
  REQUIRE(observation.values.size() == observation.workers * observation.features);
  for (std::size_t w = 0; w < observation.workers; ++w) {
    const float* row = observation.row(w);
    for (std::size_t f = 0; f < observation.features; ++f) {
      const FeatureSpec& spec =
          f < schema.local.size() ? schema.local[f] : schema.global[f - schema.local.size()];
      INFO("worker " << w << " feature " << spec.name << " = " << row[f]);
      CHECK(std::isfinite(row[f]));
      CHECK(row[f] >= spec.low);
      CHECK(row[f] <= spec.high);
    }
  }
}

void check_scenario_observations(const std::string& path) {
  INFO("scenario " << path);
  const auto scenario = std::make_shared<const Scenario>(load_scenario(path));
  BatchSizeEnv env(std::make_shared<FixedScenario>(scenario), evaluation_env_options());
  const ResetResult reset = env.reset(7);
  check_within_schema(reset.observation, env.schema());
  Rng rng(7, stream_id("observation-test"));
  std::vector<int> actions(env.workers());
  StepResult step;
  for (int decision = 0; decision < 60 && !env.episode_over(); ++decision) {
    for (int& action : actions) action = static_cast<int>(rng.below(env.options().actions.size()));
    env.step(actions, step);
    check_within_schema(step.observation, env.schema());
    for (float reward : step.rewards) CHECK(std::isfinite(reward));
  }
}

TEST_CASE("The schema declares each feature once with a unit, a normalization and ordered bounds") {
  const ObservationBuilder builder;
  const ObservationSchema& schema = builder.schema();
  std::set<std::string> names;
  for (const auto* block : {&schema.local, &schema.global}) {
    for (const FeatureSpec& feature : *block) {
      CHECK(names.insert(feature.name).second);
      CHECK_FALSE(feature.unit.empty());
      CHECK_FALSE(feature.normalization.empty());
      CHECK(feature.low < feature.high);
    }
  }
  for (const char* name :
       {"throughput", "retransmit_rate", "cpu_time_ratio", "memory_util", "compute_share",
        "comm_share", "wait_share", "batch_size", "relative_speed", "train_accuracy",
        "train_accuracy_change", "validation_accuracy", "train_loss", "grad_std_norm",
        "grad_var_norm", "progress", "iteration_time"}) {
    CHECK_MESSAGE(names.count(name) == 1, name);
  }
}

TEST_CASE("The schema's JSON lists every feature with its bounds") {
  const ObservationBuilder builder;
  const ObservationSchema& schema = builder.schema();
  const YAML::Node json = YAML::Load(schema.to_json());
  CHECK(json["version"].as<int>() == schema.version);
  CHECK(json["features_per_worker"].as<std::size_t>() == schema.features_per_worker());
  REQUIRE(json["local"].size() == schema.local.size());
  REQUIRE(json["global"].size() == schema.global.size());
  CHECK(json["local"][0]["name"].as<std::string>() == schema.local[0].name);
  CHECK(json["global"][1]["high"].as<float>() == schema.global[1].high);
}

TEST_CASE("Each row is the worker's local block followed by the same global block") {
  WindowMetrics window;
  window.iterations = 10;
  window.iteration_s = 0.2;
  window.train_accuracy = 0.5;
  window.workers.resize(3);
  for (std::size_t w = 0; w < 3; ++w) {
    window.workers[w].batch_size = 32 << w;
    window.workers[w].samples_per_s = 1000.0 * static_cast<double>(w + 1);
  }
  const ObservationBuilder builder;
  Observation observation;
  builder.build(window, observation);
  const ObservationSchema& schema = builder.schema();
  const std::size_t local = schema.local.size();
  REQUIRE(observation.workers == 3);
  for (std::size_t w = 1; w < 3; ++w) {
    for (std::size_t f = local; f < observation.features; ++f) {
      CHECK(observation.row(w)[f] == observation.row(0)[f]);
    }
  }
  std::size_t batch = 0, speed = 0;
  for (std::size_t f = 0; f < local; ++f) {
    if (schema.local[f].name == "batch_size") batch = f;
    if (schema.local[f].name == "relative_speed") speed = f;
  }
  CHECK(observation.row(0)[batch] == doctest::Approx(0.0));
  CHECK(observation.row(2)[batch] == doctest::Approx(0.4));
  CHECK(observation.row(0)[speed] == doctest::Approx(0.5));
  CHECK(observation.row(2)[speed] == doctest::Approx(1.5));
}

TEST_CASE("Extreme and missing raw metrics still give finite observations inside the bounds") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  WindowMetrics window;
  window.iteration_s = nan;
  window.train_loss = inf;
  window.train_accuracy = -3;
  window.train_accuracy_change = inf;
  window.validation_accuracy = nan;
  window.progress = 7;
  window.workers.resize(2);
  WorkerWindow& broken = window.workers[0];
  broken.batch_size = 0;
  broken.compute_s = inf;
  broken.comm_s = -1;
  broken.throughput_gbps = nan;
  broken.retransmit_rate = inf;
  broken.cpu_time_ratio = -inf;
  broken.memory_util = 3;
  broken.samples_per_s = inf;
  broken.grad_std_norm = inf;
  broken.grad_var_norm = nan;
  WorkerWindow& huge = window.workers[1];
  huge.batch_size = 1e12;
  huge.throughput_gbps = 1e9;
  huge.retransmit_rate = -1;
  const ObservationBuilder builder;
  Observation observation;
  builder.build(window, observation);
  check_within_schema(observation, builder.schema());
}

TEST_CASE("Observations are finite and inside their declared bounds for every shipped scenario") {
  const std::filesystem::path directory = std::filesystem::path(DYNAMIX_SOURCE_DIR) / "scenarios";
  std::size_t scenarios = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() != ".yaml") continue;
    ++scenarios;
    const std::string path = entry.path().string();
    try {
      check_scenario_observations(path);
    } catch (const std::exception& error) {
      const std::string message = path + ": " + error.what();
      FAIL_CHECK(message);
    }
  }
  CHECK(scenarios >= 1);
}

}  // namespace
}  // namespace dynamix
