// Cost of one simulated BSP iteration (compute, barrier, ring all-reduce through the network,
// training dynamics) as the cluster grows from 8 to 4096 nodes.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "sim/cluster/gpu_catalog.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/training_run.h"
#include "sim/training/training_options.h"

namespace dynamix {
namespace {

/// A heterogeneous leaf-spine cluster: A100, V100 and T4 nodes in turn, 32 per leaf.
Scenario heterogeneous_ring(std::size_t nodes, SyncArchitecture architecture) {
  const GpuCatalog gpus = GpuCatalog::builtin();
  const char* kMix[] = {"A100", "V100", "T4"};
  std::vector<NodeSpec> hosts;
  for (std::size_t i = 0; i < nodes; ++i) {
    hosts.push_back(
        worker_node(std::string("n").append(std::to_string(i)), *gpus.find(kMix[i % 3])));
  }
  Scenario scenario;
  scenario.name = "bench";
  scenario.topology = Topology::leaf_spine(std::move(hosts), LeafSpineOptions{});
  scenario.worker_hosts = scenario.topology.workers();
  if (architecture == SyncArchitecture::kParameterServer) {
    scenario.server_hosts = {scenario.worker_hosts.begin(), scenario.worker_hosts.begin() + 2};
  }
  scenario.sync.architecture = architecture;
  scenario.sync.servers = 2;
  const WorkloadCatalog catalog = WorkloadCatalog::builtin();
  const TrainingSetup setup =
      make_training_setup(catalog.at("resnet18-cifar10"), TrainingOptions{});
  scenario.workload = *setup.workload;
  scenario.cost = setup.cost;
  scenario.training = setup.options;
  return scenario;
}

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
