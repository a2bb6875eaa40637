// A scenario: the cluster, workload, synchronization and budget of one simulated training job,
// composed from YAML files and command-line overrides.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster/collective.h"
#include "sim/cluster/topology.h"
#include "sim/cluster/variability.h"
#include "sim/network/bandwidth_trace.h"
#include "sim/network/network.h"
#include "sim/training/training_options.h"
#include "sim/training/workload.h"

namespace dynamix {

/// The scenario compiled into the binary, used when no --scenario is given.
inline constexpr const char* kDefaultScenario = "embedded:/scenarios/quickstart.yaml";

/// Background traffic replayed on one directed link.
struct TraceAttachment {
  LinkId link = 0;
  std::string file;
  BandwidthTrace trace;
};

/// Everything needed to simulate one training job; loaded once, validated, then immutable.
struct Scenario {
  std::string name;
  std::string source;
  Topology topology;
  /// Hosts that train (ring order) and hosts that serve parameters (parameter server only).
  std::vector<std::size_t> worker_hosts;
  std::vector<std::size_t> server_hosts;
  NetworkOptions network;
  SyncOptions sync;
  VariabilityOptions variability;
  Workload workload;
  /// The workload's cost with the optimizer's state.
  ModelCost cost;
  TrainingOptions training;
  std::vector<TraceAttachment> traces;
  /// Per-worker batch used when the command line gives none.
  int batch_size = 128;
  /// Stop after this many iterations even if the training budget is not spent.
  std::optional<std::int64_t> max_iterations;
  std::uint64_t seed = 1;
  /// The documents after overrides, for run.json / summary.json.
  YAML::Node resolved;
};

/// Loads a scenario file (a path, or an "embedded:/" one) and applies `overrides`, each
/// "dotted.key=value"; keys under "topology." go to the topology file when the scenario
/// references one. Bad input throws InputError naming the file (or --set), key and line.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace dynamix
