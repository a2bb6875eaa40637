// Cost of one simulated BSP iteration (compute, barrier, ring all-reduce through the network,
// training dynamics) as the cluster grows from 8 to 4096 nodes.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "bench/bench_scenarios.h"
#include "sim/scenario/training_run.h"

namespace dynamix {
namespace {

void run_iterations(benchmark::State& state, SyncArchitecture architecture) {
  const auto nodes = static_cast<std::size_t>(state.range(0));
  const Scenario scenario = heterogeneous_ring(nodes, architecture);
  TrainingRun run(scenario, 1);
  const std::vector<int> batches(nodes, 64);
  std::int64_t iterations = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(run.step(batches));
    ++iterations;
  }
  state.counters["iterations_per_s"] =
      benchmark::Counter(static_cast<double>(iterations), benchmark::Counter::kIsRate);
  state.counters["node_iterations_per_s"] =
      benchmark::Counter(static_cast<double>(iterations * nodes), benchmark::Counter::kIsRate);
}

void BM_ClusterIteration(benchmark::State& state) {
  run_iterations(state, SyncArchitecture::kRing);
}
BENCHMARK(BM_ClusterIteration)->Arg(8)->Arg(32)->Arg(128)->Arg(1024)->Arg(4096)->ArgName("nodes");

void BM_ClusterIterationParameterServer(benchmark::State& state) {
  run_iterations(state, SyncArchitecture::kParameterServer);
}
BENCHMARK(BM_ClusterIterationParameterServer)->Arg(8)->Arg(32)->Arg(128)->ArgName("nodes");

}  // namespace
}  // namespace dynamix
