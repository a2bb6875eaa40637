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
  ScenarioSpec spec;
  spec.name = "bench";
  spec.topology = Topology::leaf_spine(std::move(hosts), LeafSpineOptions{});
  // Two parameter servers, colocated on the first two workers.
  spec.sync.architecture = architecture;
  spec.sync.servers = 2;
  spec.workload = WorkloadCatalog::builtin().at("resnet18-cifar10");
  return Scenario(std::move(spec));
}

}  // namespace dynamix
