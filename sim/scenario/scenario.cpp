// Scenario loading: resolve referenced files, apply --set overrides, parse into typed options.
#include "sim/scenario/scenario.h"

#include <algorithm>
#include <filesystem>
#include <limits>

#include "sim/cluster/gpu_catalog.h"
#include "sim/io/config_node.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {
namespace {

SyncOptions parse_sync(const ConfigNode& node) {
  node.reject_unknown({"architecture", "ring_model", "servers", "message_overhead_us"});
  SyncOptions sync;
  const std::string architecture = node.text_or("architecture", "ring");
  if (architecture == "ring") {
    sync.architecture = SyncArchitecture::kRing;
  } else if (architecture == "ps") {
    sync.architecture = SyncArchitecture::kParameterServer;
  } else {
    node.at("architecture").fail("ring or ps");
  }
  const std::string ring_model = node.text_or("ring_model", "collective");
  if (ring_model == "collective") {
    sync.ring_model = RingModel::kCollective;
  } else if (ring_model == "per_step") {
    sync.ring_model = RingModel::kPerStep;
  } else {
    node.at("ring_model").fail("collective or per_step");
  }
  sync.servers = node.int_or("servers", 1, std::numeric_limits<int>::max(), 1);
  sync.message_overhead = node.duration_or("message_overhead_us", 1e-6, sync.message_overhead);
  return sync;
}

NetworkOptions parse_network(const ConfigNode& node) {
  node.reject_unknown({"mss_bytes", "max_window_kb", "min_rto_ms", "switch_buffer_kb"});
  NetworkOptions options;
  options.mss_bytes = node.positive_or("mss_bytes", options.mss_bytes);
  options.max_window_bytes =
      node.positive_or("max_window_kb", options.max_window_bytes / 1024) * 1024;
  options.min_rto = node.duration_or("min_rto_ms", 1e-3, options.min_rto);
  if (options.min_rto <= Duration::zero()) node.at("min_rto_ms").fail("a number > 0");
  options.switch_buffer_bytes =
      node.positive_or("switch_buffer_kb", options.switch_buffer_bytes / 1024) * 1024;
  return options;
}

}  // namespace

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  ConfigNode root = ConfigNode::parse(read_text(path), path);
  std::vector<std::pair<std::string, std::string>> assignments;
  for (const std::string& assignment : overrides) {
    const auto equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw InputError("--set", 0, "", "KEY=VALUE with a dotted key", "'" + assignment + "'");
    }
    assignments.emplace_back(assignment.substr(0, equals), assignment.substr(equals + 1));
  }
  // "--set topology=FILE" picks another topology file, so it applies before the file is read.
  for (const auto& [key, value] : assignments) {
    if (key == "topology") root.set(key, value, "--set");
  }
  std::optional<ConfigNode> topology_doc;
  std::string topology_path = path;
  if (root.at("topology").is_scalar()) {
    topology_path = resolve_path(path, root.text("topology"));
    topology_doc = ConfigNode::parse(read_text(topology_path), topology_path);
  }
  for (const auto& [key, value] : assignments) {
    if (key == "topology") continue;
    const std::string assignment = key + "=" + value;
    if (topology_doc && key.starts_with("topology.")) {
      topology_doc->set(key.substr(9), value, "--set", assignment);
    } else {
      root.set(key, value, "--set");
    }
  }

  root.reject_unknown({"name", "description", "topology", "training", "sync", "network",
                       "variability", "traces", "batch_size", "iterations", "seed"});
  Scenario scenario;
  scenario.source = path;
  scenario.name = root.text_or("name", std::filesystem::path(path).stem().string());
  scenario.topology =
      Topology::load(topology_doc ? *topology_doc : root.at("topology"), GpuCatalog::builtin());
  // setup.workload points into the catalog, which must outlive it.
  const WorkloadCatalog workloads = WorkloadCatalog::builtin();
  const TrainingSetup setup = load_training(root.at("training"), workloads);
  scenario.workload = *setup.workload;
  scenario.cost = setup.cost;
  scenario.training = setup.options;
  if (const auto sync = root.find("sync")) scenario.sync = parse_sync(*sync);
  if (const auto network = root.find("network")) scenario.network = parse_network(*network);
  if (const auto variability = root.find("variability")) {
    scenario.variability = VariabilityOptions::load(*variability);
  }
  scenario.batch_size =
      root.int_or("batch_size", 1, std::numeric_limits<int>::max(), scenario.batch_size);
  if (root.has("iterations")) scenario.max_iterations = root.count_or("iterations", 1, 1);
  scenario.seed = static_cast<std::uint64_t>(root.count_or("seed", 0, 1));

  scenario.worker_hosts = scenario.topology.workers();
  scenario.server_hosts = scenario.topology.servers();
  if (scenario.worker_hosts.empty()) {
    throw InputError(topology_path, 0, "nodes", "at least one node with a GPU", "none");
  }
  if (scenario.sync.architecture == SyncArchitecture::kParameterServer) {
    // Without dedicated server hosts, servers are colocated on the first workers (BytePS
    // colocated mode).
    if (scenario.server_hosts.empty()) {
      const std::size_t count = static_cast<std::size_t>(scenario.sync.servers);
      if (count > scenario.worker_hosts.size()) {
        root.at("sync").at("servers").fail(
            "at most " + std::to_string(scenario.worker_hosts.size()) +
            " (servers are colocated with the workers when the topology has no server nodes)");
      }
      scenario.server_hosts.assign(
          scenario.worker_hosts.begin(),
          scenario.worker_hosts.begin() + static_cast<std::ptrdiff_t>(count));
    } else if (root.at("sync").has("servers")) {
      const auto wanted = static_cast<std::size_t>(scenario.sync.servers);
      if (wanted > scenario.server_hosts.size()) {
        root.at("sync").at("servers").fail("at most " +
                                           std::to_string(scenario.server_hosts.size()) +
                                           " (the server nodes in " + topology_path + ")");
      }
      scenario.server_hosts.resize(wanted);
    }
  }

  if (const auto traces = root.find("traces")) {
    for (const ConfigNode& item : traces->items()) {
      item.reject_unknown({"from", "to", "file", "repeat"});
      const std::string from = item.text("from");
      const std::string to = item.text("to");
      const auto link = scenario.topology.find_link(from, to);
      if (!link) item.fail("'from' and 'to' naming a link of the topology", from + " -> " + to);
      const std::string file = resolve_path(path, item.text("file"));
      BandwidthTrace trace = BandwidthTrace::load(file);
      trace.repeat = item.flag_or("repeat", false);
      scenario.traces.push_back({*link, file, std::move(trace)});
    }
  }

  scenario.resolved = YAML::Clone(root.yaml());
  if (topology_doc) scenario.resolved["topology"] = YAML::Clone(topology_doc->yaml());
  return scenario;
}

}  // namespace dynamix
