// PPO update throughput and TorchScript inference latency (one thread, as deployed).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "gym/observation.h"
#include "policies/export/torchscript_policy.h"
#include "policies/ppo/ppo_learner.h"
#include "policies/ppo/running_mean_std.h"
#include "sim/core/random.h"

namespace {

using namespace dynamix;

const std::vector<int> kActions = {-100, -25, 0, 25, 100};

std::size_t features() { return ObservationBuilder().schema().features_per_worker(); }

std::vector<float> random_rows(std::size_t rows, std::size_t columns, std::uint64_t seed) {
  Rng rng(seed, stream_id("bench.rows"));
  std::vector<float> values(rows * columns);
  for (float& value : values) value = static_cast<float>(rng.normal());
  return values;
}

// One PPO update (default epochs and minibatches) over a rollout of `samples` worker samples;
// the rate is rollout samples per second of update.
void BM_PpoUpdate(benchmark::State& state) {
  const auto samples = static_cast<std::size_t>(state.range(0));
  const std::size_t f = features();
  PpoLearner learner(f, kActions.size(), {});
  Rng rng(1, stream_id("bench.update"));
  Rollout rollout;
  rollout.observations = random_rows(samples, f, 2);
  rollout.actions.resize(samples);
  rollout.log_probs.resize(samples);
  rollout.values.resize(samples);
  std::vector<double> uniforms(samples);
  for (double& u : uniforms) u = rng.uniform();
  learner.act(rollout.observations, uniforms, rollout.actions, rollout.log_probs, rollout.values);
  for (std::size_t i = 0; i < samples; ++i) {
    rollout.advantages.push_back(static_cast<float>(rng.normal()));
    rollout.returns.push_back(rollout.values[i] + rollout.advantages.back());
  }
  for (auto _ : state) benchmark::DoNotOptimize(learner.update(rollout, 3e-4, rng));
  state.counters["samples_per_s"] = benchmark::Counter(
      static_cast<double>(samples * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PpoUpdate)->Arg(4096)->ArgName("samples")->Unit(benchmark::kMillisecond);

// forward() of an exported policy for one decision of the whole cluster.
void BM_TorchScriptInference(benchmark::State& state) {
  const auto workers = static_cast<std::size_t>(state.range(0));
  const std::size_t f = features();
  PpoLearner learner(f, kActions.size(), {});
  RunningMeanStd statistics(f);
  statistics.update(random_rows(64, f, 3), 64);
  const auto file = std::filesystem::temp_directory_path() / "dynamix_ppo_bench_policy.pt";
  PolicyMetadata metadata{.schema_json = ObservationBuilder().schema().to_json(),
                          .actions = kActions,
                          .min_batch = 32,
                          .max_batch = 1024,
                          .decision_interval = 10};
  const PolicySnapshot snapshot{.metadata = std::move(metadata),
                                .observation_mean = statistics.float_mean(),
                                .observation_std = statistics.float_std(),
                                .observation_clip = 10,
                                .layers = learner.actor_layers()};
  save_torchscript_policy(snapshot, file);
  const TorchScriptPolicy policy(file);
  const Observation observation{workers, f, random_rows(workers, f, 4)};
  for (auto _ : state) benchmark::DoNotOptimize(policy.greedy_actions(observation));
  std::filesystem::remove(file);
}
BENCHMARK(BM_TorchScriptInference)
    ->Arg(32)
    ->ArgName("workers")
    ->Unit(benchmark::kMicrosecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

}  // namespace
