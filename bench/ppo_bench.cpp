// PPO training throughput (whole updates, rollouts alone, the acting forward pass, the update
// alone) and TorchScript inference latency (one LibTorch thread, as deployed).
#include <benchmark/benchmark.h>

#include <filesystem>
#include <utility>
#include <vector>

#include "gym/observation.h"
#include "gym/scenario_source.h"
#include "gym/vector_env.h"
#include "policies/export/torchscript_policy.h"
#include "policies/ppo/dense_network.h"
#include "policies/ppo/ppo_learner.h"
#include "policies/ppo/ppo_trainer.h"
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

// Loading an exported policy from its bytes: checked against dynamix's own records first
// (checked:1, what every command does) or trusted by its SHA-256 (checked:0); the difference is
// the price of running no code from the file.
void BM_LoadPolicy(benchmark::State& state) {
  const std::size_t f = features();
  PpoLearner learner(f, kActions.size(), {});
  const auto file = std::filesystem::temp_directory_path() / "dynamix_ppo_bench_load.pt";
  save_torchscript_policy({.metadata = {.schema_json = ObservationBuilder().schema().to_json(),
                                        .actions = kActions,
                                        .min_batch = 32,
                                        .max_batch = 1024,
                                        .decision_interval = 10},
                           .observation_mean = std::vector<float>(f, 0),
                           .observation_std = std::vector<float>(f, 1),
                           .observation_clip = 10,
                           .layers = learner.actor_layers()},
                          file);
  const std::string archive = read_policy_archive(file);
  std::filesystem::remove(file);
  const PolicyCode code = state.range(0) != 0 ? PolicyCode::kDynamix : PolicyCode::kTrusted;
  for (auto _ : state) benchmark::DoNotOptimize(TorchScriptPolicy(archive, "bench.pt", code));
}
BENCHMARK(BM_LoadPolicy)->Arg(0)->Arg(1)->ArgName("checked")->Unit(benchmark::kMillisecond);

/// The quick-start family `dynamix train --randomize` learns from (4-256 workers), or that
/// family at exactly `workers` workers.
std::shared_ptr<ScenarioSource> family(int workers = 0) {
  SamplerOptions options = training_family(kDefaultScenario, {}, 0);
  if (workers > 0) options.min_workers = options.max_workers = workers;
  return std::make_shared<ScenarioSampler>(options);
}

/// `dynamix train`'s PPO options.
PpoOptions train_options() { return {.learning_rate = 1e-3, .initial_hold_probability = 0.5}; }

// Whole PPO updates (8 environments × 64 decisions, then the epochs) on the environment's own
// threads; the rate is decisions of all environments per second.
void BM_TrainDecisions(benchmark::State& state) {
  constexpr std::size_t kEnvironments = 8;
  VectorEnv envs(family(static_cast<int>(state.range(0))), {}, kEnvironments);
  const PpoOptions options = train_options();
  PpoTrainer trainer(envs, options);
  const auto per_update = static_cast<std::int64_t>(kEnvironments) * options.rollout_steps;
  for (auto _ : state) trainer.train((trainer.updates() + 1) * per_update);
  state.counters["decisions_per_s"] =
      benchmark::Counter(static_cast<double>(trainer.env_steps()), benchmark::Counter::kIsRate);
}
// workers = 0: the randomized quick-start family; 256: its clusters of 256 workers.
BENCHMARK(BM_TrainDecisions)
    ->Arg(0)
    ->Arg(256)
    ->ArgName("workers")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(10);

// Rollouts alone: every environment's observation through the acting forward pass, then a step
// of all of them, without learning; decisions of all environments per second.
void BM_Rollout(benchmark::State& state) {
  VectorEnv envs(family(), {}, 8);
  const std::size_t f = envs.env(0).schema().features_per_worker();
  PpoLearner learner(f, envs.env(0).options().actions.size(), train_options());
  std::vector<ResetResult> resets = envs.reset(1);
  std::vector<Observation> observations(resets.size());
  for (std::size_t i = 0; i < resets.size(); ++i)
    observations[i] = std::move(resets[i].observation);
  Rng rng(1, stream_id("bench.rollout"));
  std::vector<float> rows;
  std::vector<double> uniforms;
  std::vector<int> actions;
  std::vector<float> log_probs, values;
  std::vector<std::vector<int>> env_actions(envs.size());
  std::vector<StepResult> results;
  std::int64_t decisions = 0;
  for (auto _ : state) {
    rows.clear();
    for (const Observation& observation : observations)
      rows.insert(rows.end(), observation.values.begin(), observation.values.end());
    const std::size_t count = rows.size() / f;
    uniforms.resize(count);
    for (double& u : uniforms) u = rng.uniform();
    actions.resize(count);
    log_probs.resize(count);
    values.resize(count);
    learner.act(rows, uniforms, actions, log_probs, values);
    std::size_t first = 0;
    for (std::size_t i = 0; i < envs.size(); ++i) {
      const std::size_t workers = observations[i].workers;
      env_actions[i].assign(actions.begin() + static_cast<std::ptrdiff_t>(first),
                            actions.begin() + static_cast<std::ptrdiff_t>(first + workers));
      first += workers;
    }
    envs.step(env_actions, results);
    for (std::size_t i = 0; i < envs.size(); ++i) {
      observations[i] = results[i].observation;
      decisions += results[i].info.autoreset ? 0 : 1;
    }
  }
  state.counters["decisions_per_s"] =
      benchmark::Counter(static_cast<double>(decisions), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Rollout)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(10);

// The acting forward pass (actor and critic, log-softmax, inverse-CDF draw) over `rows` worker
// rows, against LibTorch's logits alone for the same rows; rows per second.
void BM_Act(benchmark::State& state) {
  const auto rows = static_cast<std::size_t>(state.range(0));
  const std::size_t f = features();
  PpoLearner learner(f, kActions.size(), train_options());
  const std::vector<float> observations = random_rows(rows, f, 5);
  const std::vector<double> uniforms(rows, 0.5);
  std::vector<int> actions(rows);
  std::vector<float> log_probs(rows), values(rows);
  for (auto _ : state) learner.act(observations, uniforms, actions, log_probs, values);
  state.counters["rows_per_s"] = benchmark::Counter(static_cast<double>(rows * state.iterations()),
                                                    benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Act)->Arg(512)->ArgName("rows")->Unit(benchmark::kMicrosecond);

// The actor's forward pass alone (features → 64 → 64 → actions, tanh between) over 512 rows on
// each vector unit the CPU has: 0 baseline x86-64, 1 AVX2, 2 AVX-512 (the same bits on each).
void BM_DenseForward(benchmark::State& state) {
  const auto unit = static_cast<DenseNetwork::VectorUnit>(state.range(0));
  if (!DenseNetwork::supported(unit)) {
    state.SkipWithError("this CPU lacks the vector unit");
    return;
  }
  constexpr std::size_t kRows = 512;
  const std::size_t f = features();
  const std::vector<std::size_t> widths = {f, 64, 64, kActions.size()};
  std::vector<DenseLayer> layers;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    layers.push_back({.inputs = widths[l],
                      .outputs = widths[l + 1],
                      .weight = random_rows(widths[l + 1], widths[l], 10 + l),
                      .bias = random_rows(1, widths[l + 1], 20 + l)});
  }
  DenseNetwork network(layers, unit);
  const std::vector<float> rows = random_rows(kRows, f, 6);
  std::vector<float> out(kRows * kActions.size());
  for (auto _ : state) {
    network.forward(rows, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["rows_per_s"] = benchmark::Counter(static_cast<double>(kRows * state.iterations()),
                                                    benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DenseForward)->DenseRange(0, 2)->ArgName("unit")->Unit(benchmark::kMicrosecond);

void BM_LibTorchLogits(benchmark::State& state) {
  const auto rows = static_cast<std::size_t>(state.range(0));
  const std::size_t f = features();
  PpoLearner learner(f, kActions.size(), train_options());
  const std::vector<float> observations = random_rows(rows, f, 5);
  for (auto _ : state) benchmark::DoNotOptimize(learner.logits(observations));
  state.counters["rows_per_s"] = benchmark::Counter(static_cast<double>(rows * state.iterations()),
                                                    benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LibTorchLogits)->Arg(512)->ArgName("rows")->Unit(benchmark::kMicrosecond);

}  // namespace
