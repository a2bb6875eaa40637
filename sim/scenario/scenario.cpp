// Scenarios: the checking constructor, and loading from files with --set overrides through the
// knob tables.
#include "sim/scenario/scenario.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "sim/cluster/gpu_catalog.h"
#include "sim/io/config_node.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/io/sources.h"
#include "sim/scenario/scenario_knobs.h"

namespace dynamix {
namespace {

void check_knobs(const ScenarioSpec& spec) {
  for (const ScenarioKnobTable& table : scenario_knobs()) {
    for (const ScenarioKnob& knob : table.knobs) {
      if (!knob.violation) continue;
      if (const auto found = knob.violation(spec)) {
        throw InputError(spec.source, 0, knob.key, knob.range, *found);
      }
    }
  }
}

void check_traces(const ScenarioSpec& spec) {
  for (std::size_t i = 0; i < spec.traces.size(); ++i) {
    if (spec.traces[i].link >= spec.topology.links().size()) {
      throw InputError(spec.source, 0, "traces." + std::to_string(i), "a link of the topology",
                       "link " + std::to_string(spec.traces[i].link));
    }
  }
}

void check_colocated_jobs(const ScenarioSpec& spec) {
  for (std::size_t i = 0; i < spec.colocated_jobs.size(); ++i) {
    const ColocatedJob& job = spec.colocated_jobs[i];
    const std::string key = "colocated_jobs." + std::to_string(i);
    const bool on_links =
        !job.route.empty() && std::all_of(job.route.begin(), job.route.end(), [&](LinkId link) {
          return link < spec.topology.links().size();
        });
    if (!on_links) {
      throw InputError(spec.source, 0, key, "a route over links of the topology",
                       job.from + " -> " + job.to);
    }
    if (!(job.rate_gbps > 0 && job.mean_on_s > 0 && job.mean_off_s > 0)) {
      throw InputError(spec.source, 0, key, "rate_gbps, mean_on_s and mean_off_s above 0",
                       format_number(job.rate_gbps) + ", " + format_number(job.mean_on_s) + ", " +
                           format_number(job.mean_off_s));
    }
  }
}

void check_buckets(const ScenarioSpec& spec) {
  const ModelCost& cost = spec.workload.cost;
  const double gradient_bytes = cost.parameters * cost.bytes_per_parameter;
  const double bucket = spec.sync.bucket_bytes;
  if (bucket > 0 && gradient_bytes / bucket > kMaxGradientBuckets) {
    throw InputError(spec.source, 0, "sync.bucket_mb",
                     "at least " + format_number(gradient_bytes / kMaxGradientBuckets / 1048576) +
                         " MiB (at most 4096 buckets of the " + spec.workload.name + " gradient)",
                     format_number(bucket / 1048576));
  }
}

void check_preemption(const ScenarioSpec& spec) {
  const PreemptionOptions& options = spec.preemption;
  if (options.enabled() && options.mode == PreemptionMode::kPause && !options.rejoin) {
    throw InputError(spec.source, 0, "preemption.rejoin",
                     "true when preemption.mode is pause (a paused job waits for every worker)",
                     "false");
  }
}

/// Where the parameter servers run: the first sync.servers server nodes (all by default), or,
/// without server nodes, colocated on the first workers (BytePS colocated mode).
std::vector<std::size_t> place_servers(const ScenarioSpec& spec,
                                       const std::vector<std::size_t>& workers) {
  if (spec.sync.architecture != SyncArchitecture::kParameterServer) return {};
  std::vector<std::size_t> servers = spec.topology.servers();
  if (servers.empty()) {
    const auto count = static_cast<std::size_t>(spec.sync.servers.value_or(1));
    if (count > workers.size()) {
      throw InputError(spec.source, 0, "sync.servers",
                       "at most " + std::to_string(workers.size()) +
                           " (servers are colocated with the workers when the topology has no "
                           "server nodes)",
                       std::to_string(count));
    }
    return {workers.begin(), workers.begin() + static_cast<std::ptrdiff_t>(count)};
  }
  if (spec.sync.servers) {
    const auto wanted = static_cast<std::size_t>(*spec.sync.servers);
    if (wanted > servers.size()) {
      throw InputError(
          spec.source, 0, "sync.servers",
          "at most " + std::to_string(servers.size()) + " (the server nodes of the topology)",
          std::to_string(wanted));
    }
    servers.resize(wanted);
  }
  return servers;
}

/// The hosts that train and serve, once `spec` is known to be valid.
std::pair<std::vector<std::size_t>, std::vector<std::size_t>> checked_hosts(
    const ScenarioSpec& spec) {
  check_knobs(spec);
  check_traces(spec);
  check_colocated_jobs(spec);
  check_buckets(spec);
  check_preemption(spec);
  std::vector<std::size_t> workers = spec.topology.workers();
  if (workers.empty()) {
    throw InputError(spec.source, 0, "topology.nodes", "at least one node with a GPU", "none");
  }
  std::vector<std::size_t> servers = place_servers(spec, workers);
  return {std::move(workers), std::move(servers)};
}

std::vector<std::pair<std::string, std::string>> parse_assignments(
    const std::vector<std::string>& overrides) {
  std::vector<std::pair<std::string, std::string>> assignments;
  for (const std::string& assignment : overrides) {
    const auto equals = assignment.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw InputError("--set", 0, "", "KEY=VALUE with a dotted key", "'" + assignment + "'");
    }
    assignments.emplace_back(assignment.substr(0, equals), assignment.substr(equals + 1));
  }
  return assignments;
}

/// A scenario document with its overrides applied, and its topology document when it
/// references a file.
struct Documents {
  ConfigNode root;
  std::optional<ConfigNode> topology;
  std::string topology_path;
};

/// Whether `key` is "SECTION.NAME" of a knob table: --set may add the section a file omits (and
/// an unknown NAME is then reported with the section's known keys).
bool in_declared_section(const std::string& key) {
  const auto dot = key.rfind('.');
  if (dot == std::string::npos) return false;
  for (const ScenarioKnobTable& table : scenario_knobs()) {
    if (!table.section.empty() && key.substr(0, dot) == table.section) return true;
  }
  return false;
}

Documents read_documents(const std::string& path, const std::vector<std::string>& overrides) {
  Documents documents{ConfigNode::parse(read_text(path), path), std::nullopt, path};
  const auto assignments = parse_assignments(overrides);
  // "--set topology=FILE" picks another topology file, so it applies before the file is read.
  for (const auto& [key, value] : assignments) {
    if (key == "topology") documents.root.set(key, value, "--set");
  }
  if (documents.root.at("topology").is_scalar()) {
    documents.topology_path = resolve_path(path, documents.root.text("topology"));
    documents.topology =
        ConfigNode::parse(read_text(documents.topology_path), documents.topology_path);
  }
  for (const auto& [key, value] : assignments) {
    if (key == "topology") continue;
    if (documents.topology && key.starts_with("topology.")) {
      documents.topology->set(key.substr(9), value, "--set", key + "=" + value);
    } else {
      documents.root.set(key, value, "--set", {}, in_declared_section(key));
    }
  }
  return documents;
}

/// The top-level keys: each table's own, and the sections.
std::vector<std::string> top_level_keys() {
  std::vector<std::string> keys;
  for (const ScenarioKnobTable& table : scenario_knobs()) {
    if (!table.section.empty()) keys.push_back(table.section);
    for (const ScenarioKnob& knob : table.knobs) {
      if (table.section.empty()) keys.push_back(knob.key);
    }
  }
  return keys;
}

void read_tables(const ConfigNode& root, ScenarioSpec& spec, Diagnostics& diagnostics) {
  root.reject_unknown(top_level_keys());
  for (const ScenarioKnobTable& table : scenario_knobs()) {
    std::optional<ConfigNode> section = root;
    if (table.section == "training") {
      section = root.at(table.section);
    } else if (!table.section.empty()) {
      section = root.find(table.section);
    }
    const std::size_t prefix_size = table.section.size() + 1;
    if (section && !table.section.empty()) {
      std::vector<std::string> keys;
      for (const ScenarioKnob& knob : table.knobs) keys.push_back(knob.key.substr(prefix_size));
      section->reject_unknown(keys);
    }
    for (const ScenarioKnob& knob : table.knobs) {
      if (section && knob.read) knob.read(*section, spec);
      if (section && knob.typical) {
        const std::string key = table.section.empty() ? knob.key : knob.key.substr(prefix_size);
        diagnostics.check_typical(*section, key, knob.unit, *knob.typical);
      }
    }
    if (table.complete) table.complete(section ? &*section : nullptr, spec);
  }
  if (const auto devices = root.find("devices")) GpuCatalog::check_devices(*devices, diagnostics);
}

std::vector<TraceAttachment> read_traces(const ConfigNode& root, const Topology& topology,
                                         const std::string& path) {
  std::vector<TraceAttachment> attachments;
  const auto traces = root.find("traces");
  if (!traces) return attachments;
  for (const ConfigNode& item : traces->items()) {
    item.reject_unknown({"from", "to", "file", "repeat"});
    const std::string from = item.text("from");
    const std::string to = item.text("to");
    const auto link = topology.find_link(from, to);
    if (!link) item.fail("'from' and 'to' naming a link of the topology", from + " -> " + to);
    const std::string file = resolve_path(path, item.text("file"));
    BandwidthTrace trace = BandwidthTrace::load(file);
    trace.repeat = item.flag_or("repeat", false);
    attachments.push_back({*link, file, std::move(trace)});
  }
  return attachments;
}

/// The route between a co-located job's endpoints: the link they name, or the fewest-hop route
/// between two hosts.
Route colocated_route(const ConfigNode& item, Topology& topology, const std::string& from,
                      const std::string& to) {
  if (const auto link = topology.find_link(from, to)) return {*link};
  const auto source = topology.find_host(from);
  const auto target = topology.find_host(to);
  if (!source || !target || *source == *target) {
    item.fail("'from' and 'to' naming a link or two different hosts of the topology",
              from + " -> " + to);
  }
  const std::pair<std::size_t, std::size_t> pair{*source, *target};
  topology.precompute_routes({&pair, 1});
  return topology.route(*source, *target);
}

std::vector<ColocatedJob> read_colocated_jobs(const ConfigNode& root, Topology& topology) {
  std::vector<ColocatedJob> jobs;
  const auto list = root.find("colocated_jobs");
  if (!list) return jobs;
  for (const ConfigNode& item : list->items()) {
    item.reject_unknown({"from", "to", "rate_gbps", "mean_on_s", "mean_off_s"});
    ColocatedJob job;
    job.from = item.text("from");
    job.to = item.text("to");
    job.route = colocated_route(item, topology, job.from, job.to);
    job.rate_gbps = item.positive("rate_gbps");
    job.mean_on_s = item.positive("mean_on_s");
    job.mean_off_s = item.positive("mean_off_s");
    jobs.push_back(std::move(job));
  }
  return jobs;
}

/// The devices and workloads of the file a scenario's `catalog:` names.
void read_catalog_file(const ConfigNode& reference, const std::string& scenario_path,
                       ScenarioSpec& spec, Diagnostics& diagnostics) {
  const std::string file = resolve_path(scenario_path, reference.as_text());
  const ConfigNode catalog = ConfigNode::parse(read_text(file), file);
  catalog.reject_unknown({"devices", "workloads"});
  if (const auto devices = catalog.find("devices")) {
    spec.devices = GpuCatalog::read_devices(*devices);
    GpuCatalog::check_devices(*devices, diagnostics);
  }
  if (const auto workloads = catalog.find("workloads"))
    spec.workloads = WorkloadCatalog::read_workloads(*workloads);
}

/// Re-raises a check of the constructor at the place in the files that gave the value.
[[noreturn]] void blame_documents(const InputError& error, const Documents& documents) {
  std::optional<ConfigNode> node;
  if (documents.topology && error.where().starts_with("topology.")) {
    node = documents.topology->find_path(error.where().substr(9));
  } else {
    node = documents.root.find_path(error.where());
  }
  if (node) node->fail(error.expected());
  const bool in_topology = documents.topology && error.where().starts_with("topology.");
  throw InputError(in_topology ? documents.topology_path : documents.root.source(), 0,
                   in_topology ? error.where().substr(9) : error.where(), error.expected(),
                   error.found());
}

}  // namespace

Scenario::Scenario(ScenarioSpec spec) : Scenario(std::move(spec), checked_hosts(spec)) {}

Scenario::Scenario(ScenarioSpec&& spec, Hosts hosts)
    : name(std::move(spec.name)),
      source(std::move(spec.source)),
      topology(std::move(spec.topology)),
      worker_hosts(std::move(hosts.first)),
      server_hosts(std::move(hosts.second)),
      network(spec.network),
      sync(spec.sync),
      variability(spec.variability),
      preemption(spec.preemption),
      workload(std::move(spec.workload)),
      cost(make_training_setup(workload, spec.training).cost),
      training(spec.training),
      traces(std::move(spec.traces)),
      colocated_jobs(std::move(spec.colocated_jobs)),
      devices(std::move(spec.devices)),
      workloads(std::move(spec.workloads)),
      batch_size(spec.batch_size),
      max_iterations(spec.max_iterations),
      seed(spec.seed),
      resolved(std::move(spec.resolved)) {}

ScenarioSpec Scenario::spec() const {
  return {.name = name,
          .source = source,
          .topology = topology,
          .network = network,
          .sync = sync,
          .variability = variability,
          .preemption = preemption,
          .workload = workload,
          .training = training,
          .devices = devices,
          .workloads = workloads,
          .traces = traces,
          .colocated_jobs = colocated_jobs,
          .batch_size = batch_size,
          .max_iterations = max_iterations,
          .seed = seed,
          .resolved = resolved};
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                       Diagnostics& diagnostics) {
  const Documents documents = read_documents(path, overrides);
  const ConfigNode& root = documents.root;
  ScenarioSpec spec;
  spec.source = path;
  spec.name = std::filesystem::path(path).stem().string();
  if (const auto catalog = root.find("catalog"))
    read_catalog_file(*catalog, path, spec, diagnostics);
  read_tables(root, spec, diagnostics);
  spec.topology = Topology::load(documents.topology ? *documents.topology : root.at("topology"),
                                 GpuCatalog::builtin().with(spec.devices), diagnostics);
  spec.traces = read_traces(root, spec.topology, path);
  spec.colocated_jobs = read_colocated_jobs(root, spec.topology);
  spec.resolved = root.tree();
  if (documents.topology)
    spec.resolved = spec.resolved.with("topology", documents.topology->tree());
  try {
    return Scenario(std::move(spec));
  } catch (const InputError& error) {
    blame_documents(error, documents);
  }
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  Diagnostics diagnostics = Diagnostics::on_stderr(false);
  return load_scenario(path, overrides, diagnostics);
}

}  // namespace dynamix
