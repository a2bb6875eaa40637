// Generated clusters the benchmarks share.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster/gpu_catalog.h"
#include "sim/scenario/scenario.h"
#include "sim/training/training_options.h"

namespace dynamix {

/// A heterogeneous leaf-spine cluster: A100, V100 and T4 nodes in turn, 32 per leaf.
inline Scenario heterogeneous_ring(std::size_t nodes, SyncArchitecture architecture) {
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

}  // namespace dynamix
