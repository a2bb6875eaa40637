// A scenario: the cluster, workload, synchronization and budget of one simulated training job,
// checked once when it is built (from YAML files and command-line overrides, or in code) and
// immutable after.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/cluster/collective.h"
#include "sim/cluster/preemption.h"
#include "sim/cluster/topology.h"
#include "sim/cluster/variability.h"
#include "sim/io/config_tree.h"
#include "sim/network/bandwidth_trace.h"
#include "sim/network/colocated_traffic.h"
#include "sim/network/network.h"
#include "sim/training/training_options.h"
#include "sim/training/workload.h"

namespace dynamix {

class Diagnostics;

/// The scenario compiled into the binary, used when no --scenario is given.
inline constexpr const char* kDefaultScenario = "embedded:/scenarios/quickstart.yaml";

/// Background traffic replayed on one directed link.
struct TraceAttachment {
  LinkId link = 0;
  std::string file;
  BandwidthTrace trace;
};

/// What a scenario is made of, before it is checked. Every declared key of a scenario file
/// (see scenario_knobs()) has its field here.
struct ScenarioSpec {
  std::string name = "scenario";
  /// Where the values came from (a file, "--set", the sampler): errors name it.
  std::string source = "scenario";
  Topology topology;
  NetworkOptions network;
  SyncOptions sync;
  VariabilityOptions variability;
  PreemptionOptions preemption;
  Workload workload;
  TrainingOptions training;
  /// Devices and workloads the scenario declares (its catalog file's, then its own), beside
  /// the built-in catalogs; each replaces a built-in entry of the same name.
  std::vector<GpuSpec> devices;
  std::vector<Workload> workloads;
  std::vector<TraceAttachment> traces;
  /// Other jobs' flows on the fabric, each switching on and off.
  std::vector<ColocatedJob> colocated_jobs;
  /// Per-worker batch used when the command line gives none.
  int batch_size = 128;
  /// Stop after this many iterations even if the training budget is not spent.
  std::optional<std::int64_t> max_iterations;
  std::uint64_t seed = 1;
  /// The documents after overrides, for run.json / summary.json.
  ConfigTree resolved;
};

/// Everything needed to simulate one training job. The only way to make one is the checking
/// constructor, so a Scenario always holds values in their declared ranges, at least one
/// worker, and its parameter servers placed.
class Scenario {
 public:
  /// Checks `spec` (every declared key in its range, a workload, a topology with a GPU node,
  /// traces on its links) and places the parameter servers: on the first sync.servers server
  /// nodes of the topology (all of them by default), or colocated on the first workers when it
  /// has none (BytePS colocated mode). Bad values are InputErrors naming spec.source and the
  /// dotted key.
  explicit Scenario(ScenarioSpec spec);

  /// The spec this scenario was built from, to derive another scenario from it.
  ScenarioSpec spec() const;

  const std::string name;
  const std::string source;
  const Topology topology;
  /// Hosts that train (ring order) and hosts that serve parameters (parameter server only).
  const std::vector<std::size_t> worker_hosts;
  const std::vector<std::size_t> server_hosts;
  const NetworkOptions network;
  const SyncOptions sync;
  const VariabilityOptions variability;
  const PreemptionOptions preemption;
  const Workload workload;
  /// The workload's cost with the optimizer's state.
  const ModelCost cost;
  const TrainingOptions training;
  const std::vector<TraceAttachment> traces;
  const std::vector<ColocatedJob> colocated_jobs;
  /// The devices and workloads the scenario declared (already resolved into the topology and
  /// the workload; kept so that what a scenario declares can be shown).
  const std::vector<GpuSpec> devices;
  const std::vector<Workload> workloads;
  const int batch_size;
  const std::optional<std::int64_t> max_iterations;
  const std::uint64_t seed;
  const ConfigTree resolved;

 private:
  /// Workers, then parameter servers.
  using Hosts = std::pair<std::vector<std::size_t>, std::vector<std::size_t>>;
  Scenario(ScenarioSpec&& spec, Hosts hosts);
};

/// Loads a scenario file (a path, or an "embedded:/" one) and applies `overrides`, each
/// "dotted.key=value"; keys under "topology." go to the topology file when the scenario
/// references one, and a declared key may add the section a file omits. Bad input throws
/// InputError naming the file (or --set), key and line. Implausible values go to `diagnostics`,
/// the run's.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       Diagnostics& diagnostics);
/// The same outside a run (tests, tools that run nothing): implausible values are warned about
/// on stderr, never refused.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});

}  // namespace dynamix
