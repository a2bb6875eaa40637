// ScenarioSampler: seeded domain randomization within the declared ranges.
#include "gym/scenario_source.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <set>

#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"
#include "sim/io/diagnostics.h"
#include "sim/scenario/training_run.h"

namespace dynamix {
namespace {

std::vector<std::string> gpu_names(const Scenario& scenario) {
  std::vector<std::string> names;
  for (std::size_t host : scenario.worker_hosts)
    names.push_back(scenario.topology.hosts()[host].gpu);
  return names;
}

TEST_CASE("The sampler gives the same scenario for the same seed") {
  const ScenarioSampler sampler({});
  const auto a = sampler.scenario_for(9);
  const auto b = sampler.scenario_for(9);
  CHECK(a->worker_hosts.size() == b->worker_hosts.size());
  CHECK(gpu_names(*a) == gpu_names(*b));
  CHECK(a->topology.links()[0].bandwidth_gbps == b->topology.links()[0].bandwidth_gbps);
  CHECK(a->traces.size() == b->traces.size());
  CHECK(a->name == b->name);
}

TEST_CASE("Samples vary within the declared ranges") {
  const ScenarioSampler sampler({.min_workers = 2,
                                 .max_workers = 6,
                                 .gpu_types = {"A100", "T4"},
                                 .min_bandwidth_gbps = 10,
                                 .max_bandwidth_gbps = 40,
                                 .max_loss_rate = 1e-3,
                                 .background_probability = 0.5,
                                 .tiers = {1},
                                 .workloads = {"resnet18-cifar10", "vgg11-cifar10"},
                                 .optimizers = {"sgd", "adam"}});
  std::set<std::size_t> sizes;
  std::set<std::string> gpus, workloads;
  std::set<Optimizer> optimizers;
  std::size_t with_background = 0;
  for (std::uint64_t seed = 0; seed < 60; ++seed) {
    const auto scenario = sampler.scenario_for(seed);
    const std::size_t workers = scenario->worker_hosts.size();
    CHECK(workers >= 2);
    CHECK(workers <= 6);
    sizes.insert(workers);
    for (const std::string& gpu : gpu_names(*scenario)) gpus.insert(gpu);
    for (const LinkSpec& link : scenario->topology.links()) {
      CHECK(link.bandwidth_gbps >= 10);
      CHECK(link.bandwidth_gbps <= 40);
      CHECK(link.loss_rate <= 1e-3);
    }
    with_background += scenario->traces.empty() ? 0 : 1;
    workloads.insert(scenario->workload.name);
    optimizers.insert(scenario->training.optimizer);
  }
  CHECK(sizes.size() == 5);
  CHECK(gpus == std::set<std::string>{"A100", "T4"});
  CHECK(with_background > 10);
  CHECK(with_background < 50);
  CHECK(workloads.size() == 2);
  CHECK(optimizers.size() == 2);
}

TEST_CASE("The default family spans 4-256 workers, one- to three-tier fabrics, ring and PS") {
  const ScenarioSampler sampler({});
  std::size_t smallest = 1000, largest = 0, parameter_servers = 0;
  std::set<std::size_t> switch_counts;
  std::set<int> start_batches;
  for (std::uint64_t seed = 0; seed < 80; ++seed) {
    const auto scenario = sampler.scenario_for(seed);
    const std::size_t workers = scenario->worker_hosts.size();
    smallest = std::min(smallest, workers);
    largest = std::max(largest, workers);
    switch_counts.insert(scenario->topology.switches().size());
    parameter_servers += scenario->sync.architecture == SyncArchitecture::kParameterServer;
    CHECK(scenario->batch_size >= 32);
    CHECK(scenario->batch_size <= 256);
    start_batches.insert(scenario->batch_size);
  }
  CHECK(smallest < 8);
  CHECK(largest > 128);
  CHECK(switch_counts.size() > 3);  // stars have one switch, fabrics several
  CHECK(parameter_servers > 5);
  CHECK(parameter_servers < 40);
  CHECK(start_batches.size() > 20);
}

TEST_CASE("An environment over the sampler runs episodes of different cluster sizes") {
  const auto sampler =
      std::make_shared<ScenarioSampler>(SamplerOptions{.min_workers = 2, .max_workers = 9});
  BatchSizeEnv env(sampler, evaluation_env_options());
  std::set<std::size_t> sizes;
  for (std::uint64_t seed = 0; seed < 6; ++seed) {
    const ResetResult reset = env.reset(seed);
    CHECK(reset.observation.workers == env.workers());
    sizes.insert(env.workers());
    const StepResult step = env.step(std::vector<int>(env.workers(), 3));
    CHECK(step.rewards.size() == env.workers());
  }
  CHECK(sizes.size() > 1);
}

TEST_CASE("A family sample's target and time budget come from a reference job that reaches it") {
  SamplerOptions options = training_family(std::string(kDefaultScenario), {}, 2);
  options.min_workers = 2;
  options.max_workers = 8;
  options.workloads = {"resnet18-cifar10", "resnet50-imagenet"};
  const ScenarioSampler sampler(options);
  std::size_t lowered = 0, reached = 0;
  constexpr std::uint64_t kSamples = 8;
  for (std::uint64_t seed = 1; seed <= kSamples; ++seed) {
    const auto scenario = sampler.scenario_for(seed);
    CAPTURE(scenario->resolved.to_yaml());
    const std::optional<std::string> reference_s = scenario->resolved.text("reference_time_s");
    REQUIRE(reference_s);
    REQUIRE(scenario->training.budget_time_s);
    CHECK(*scenario->training.budget_time_s == doctest::Approx(2 * std::stod(*reference_s)));
    CHECK(scenario->training.target_accuracy <= scenario->workload.statistics.target_accuracy);
    lowered += scenario->training.target_accuracy < scenario->workload.statistics.target_accuracy;
    // The reference job itself (64 per worker), with the validation set's noise, reaches the
    // target inside the budget.
    TrainingRun run(*scenario, seed);
    std::vector<int> batches(run.workers());
    for (std::size_t w = 0; w < batches.size(); ++w) batches[w] = std::min(64, run.max_batch(w));
    while (!run.budget_exhausted() && !run.reached_target()) run.step(batches);
    reached += run.reached_target();
  }
  CHECK(lowered > 0);  // ImageNet on 2-8 workers cannot reach 76% in 20,000 iterations
  CHECK(reached == kSamples);
}

TEST_CASE("The sampler applies overrides to its base scenario") {
  const ScenarioSampler sampler({.overrides = {"training.budget_epochs=3"}});
  CHECK(sampler.scenario_for(1)->training.budget_epochs == 3);
}

TEST_CASE("A strict run trains on sampled fabrics whose spine links carry many NICs' bandwidth") {
  Diagnostics strict({.strict = true});
  const ScenarioSampler sampler({.min_workers = 64,
                                 .max_workers = 64,
                                 .min_bandwidth_gbps = 200,
                                 .max_bandwidth_gbps = 200,
                                 .tiers = {2},
                                 .max_oversubscription = 1},
                                strict);
  double widest_gbps = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    std::shared_ptr<const Scenario> scenario;
    REQUIRE_NOTHROW(scenario = sampler.scenario_for(seed));
    for (const LinkSpec& link : scenario->topology.links())
      widest_gbps = std::max(widest_gbps, link.bandwidth_gbps);
  }
  // 32 hosts a leaf x 200 Gb/s over 2 spines: above any single NIC, which a user's own link
  // may not be.
  CHECK(widest_gbps > 1600);
  CHECK(strict.warnings().empty());
}

TEST_CASE("Sampler options out of range are an EnvError") {
  CHECK_THROWS_WITH_AS(ScenarioSampler({.min_workers = 5, .max_workers = 4}),
                       "sampler: expected 1 <= min_workers <= max_workers, found 5 and 4",
                       EnvError);
  CHECK_THROWS_AS(ScenarioSampler({.gpu_types = {"A100", "Z80"}}), EnvError);
  CHECK_THROWS_AS(ScenarioSampler({.workloads = {"nope"}}), EnvError);
  CHECK_THROWS_AS(ScenarioSampler({.optimizers = {"lion"}}), EnvError);
  CHECK_THROWS_AS(ScenarioSampler({.max_loss_rate = 1}), EnvError);
  CHECK_THROWS_AS(ScenarioSampler({.reference_budget_factor = -1}), EnvError);
  CHECK_THROWS_AS(ScenarioSampler({.reference_share = 0}), EnvError);
}

}  // namespace
}  // namespace dynamix
