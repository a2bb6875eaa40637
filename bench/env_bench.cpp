// Environment throughput: decisions (steps of k = 10 iterations) per second, one environment on
// one thread and a VectorEnv on two. Target: >= 20,000 steps/s per core at 8 workers.
#include <benchmark/benchmark.h>

#include "gym/env_knobs.h"
#include "gym/vector_env.h"

namespace dynamix {
namespace {

// 8 workers: the quick-start cluster; 32: the heterogeneous leaf-spine one.
std::shared_ptr<const ScenarioSource> scenario_with(std::int64_t workers) {
  const char* path = workers == 8 ? kDefaultScenario : "embedded:/scenarios/hetero32.yaml";
  return std::make_shared<FixedScenario>(std::make_shared<const Scenario>(load_scenario(path)));
}

/// Steps one environment on `base`, every worker taking action (step + worker) mod the set.
void step_environment(benchmark::State& state, ActionBase base) {
  EnvOptions options = evaluation_env_options();
  options.action_base = base;
  options.actions = {};
  BatchSizeEnv env(scenario_with(state.range(0)), options);
  std::uint64_t seed = 1;
  env.reset(seed);
  const std::size_t choices = env.options().actions.size();
  std::vector<int> actions(env.workers());
  StepResult step;
  std::int64_t steps = 0;
  for (auto _ : state) {
    if (env.episode_over()) env.reset(++seed);
    for (std::size_t w = 0; w < actions.size(); ++w) {
      actions[w] = static_cast<int>((static_cast<std::size_t>(steps) + w) % choices);
    }
    env.step(actions, step);
    ++steps;
  }
  state.counters["steps_per_s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
  state.counters["iterations_per_s"] = benchmark::Counter(
      static_cast<double>(steps * env.options().decision_interval), benchmark::Counter::kIsRate);
}

void BM_EnvStep(benchmark::State& state) { step_environment(state, ActionBase::kBalanced); }
BENCHMARK(BM_EnvStep)->Arg(8)->Arg(32)->ArgName("workers")->Unit(benchmark::kMicrosecond);

// The rule base: every rule fed every window, the agreed one deciding (it changes every step).
void BM_EnvStepRules(benchmark::State& state) { step_environment(state, ActionBase::kRule); }
BENCHMARK(BM_EnvStepRules)->Arg(8)->Arg(32)->ArgName("workers")->Unit(benchmark::kMicrosecond);

// Four environments on two threads; autoreset included.
void BM_VectorEnvStep(benchmark::State& state) {
  constexpr std::size_t kEnvironments = 4;
  VectorEnv vector_env(scenario_with(state.range(0)), evaluation_env_options(), kEnvironments, 2);
  vector_env.reset(1);
  std::vector<std::vector<int>> actions(kEnvironments);
  std::vector<StepResult> results;
  std::int64_t steps = 0;
  for (auto _ : state) {
    for (std::size_t i = 0; i < kEnvironments; ++i) {
      actions[i].assign(vector_env.env(i).workers(),
                        static_cast<int>((static_cast<std::size_t>(steps) + i) % 5));
    }
    vector_env.step(actions, results);
    steps += kEnvironments;
  }
  state.counters["steps_per_s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_VectorEnvStep)
    ->Arg(8)
    ->Arg(32)
    ->ArgName("workers")
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace dynamix
