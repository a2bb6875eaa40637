// Fabric generation: a shape read from YAML, written out as switches, nodes and links.
#include "sim/cluster/fabric_generator.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <sstream>

#include "sim/cluster/topology.h"
#include "sim/cluster/topology_knobs.h"
#include "sim/core/check.h"
#include "sim/io/closest_name.h"
#include "sim/io/config_node.h"
#include "sim/io/json_writer.h"

namespace dynamix {
namespace {

/// The generated topology holds about 10 values a node (a node entry and its uplink), and a YAML
/// document at most ConfigNode::kMaxValues: 65,536 nodes stay well inside.
using R = TopologyRanges;
constexpr auto kMaxNodes = static_cast<std::int64_t>(R::kFabricNodes.high);

std::vector<GpuShare> read_gpu_shares(const ConfigNode& node, const GpuCatalog& catalog) {
  std::vector<GpuShare> shares;
  double sum = 0;
  for (const std::string& gpu : node.keys()) {
    if (catalog.find(gpu) == nullptr)
      node.at(gpu).fail("a GPU type in the catalog",
                        "'" + gpu + "'" + did_you_mean(gpu, catalog.names()));
    const double fraction = node.at(gpu).as_number();
    if (!(fraction > 0 && fraction <= 1)) node.at(gpu).fail("a share in (0, 1]");
    shares.push_back({catalog.find(gpu)->name, fraction});
    sum += fraction;
  }
  if (shares.empty() || std::abs(sum - 1) > 1e-6) {
    node.fail("GPU shares that sum to 1", "a sum of " + format_number(sum));
  }
  return shares;
}

FabricGroup read_group(const ConfigNode& entry, const GpuCatalog& catalog,
                       const FabricShape& defaults, Diagnostics& diagnostics) {
  entry.reject_unknown(accepted_keys("topology.fabric.groups[]"));
  FabricGroup group;
  const ConfigNode gpu = entry.at("gpu");
  const GpuSpec* spec = catalog.find(gpu.as_text());
  if (spec == nullptr) {
    gpu.fail("a GPU type in the catalog",
             "'" + gpu.as_text() + "'" + did_you_mean(gpu.as_text(), catalog.names()));
  }
  group.gpu = spec->name;
  if (entry.has("share") == entry.has("nodes")) {
    entry.fail("a group sized by exactly one of share or nodes",
               entry.has("share") ? "both" : "neither");
  }
  if (entry.has("share")) {
    group.share = entry.number("share");
    if (!(group.share > 0 && group.share <= 1)) {
      entry.at("share").fail(std::string(R::kGroupShare));
    }
  } else {
    group.count = static_cast<std::size_t>(read_in(entry, "nodes", R::kFabricNodes, 1));
  }
  group.gpus_per_node =
      static_cast<int>(read_in(entry, "gpus_per_node", R::kGpusPerNode, defaults.gpus_per_node));
  group.cpu_cores = static_cast<int>(read_in(entry, "cpu_cores", R::kCpuCores, defaults.cpu_cores));
  group.host_bandwidth_gbps =
      entry.positive_or("host_bandwidth_gbps", defaults.host_bandwidth_gbps);
  group.host_latency_us = entry.at_least_or("host_latency_us", 0, defaults.host_latency_us);
  group.loss_rate = entry.fraction_or("loss_rate", defaults.loss_rate);
  check_typical_values(entry, "topology.fabric.groups[]", diagnostics);
  return group;
}

/// The fabric's node count when its groups all have fixed counts: their sum, which a given
/// `nodes` must equal.
std::size_t counted_nodes(const ConfigNode& fabric, const std::vector<FabricGroup>& groups) {
  std::size_t sum = 0;
  for (const FabricGroup& group : groups) sum += group.count;
  if (fabric.has("nodes") && static_cast<std::size_t>(fabric.integer("nodes")) != sum) {
    fabric.at("nodes").fail("the sum of the groups' nodes (" + std::to_string(sum) +
                            ") when no group has a share");
  }
  if (sum > static_cast<std::size_t>(kMaxNodes))
    fabric.at("groups").fail("groups of at most " + std::to_string(kMaxNodes) + " nodes in all");
  return sum;
}

/// Checks that the shares sum to 1 and that each share group gets at least one node.
void check_shares(const ConfigNode& list, const std::vector<FabricGroup>& groups,
                  std::size_t nodes) {
  double sum = 0;
  std::size_t fixed = 0;
  for (const FabricGroup& group : groups) {
    sum += group.share;
    fixed += group.count;
  }
  if (std::abs(sum - 1) > 1e-6)
    list.fail("group shares that sum to 1", "a sum of " + format_number(sum));
  const std::vector<std::size_t> counts = group_counts(groups, nodes);
  const std::size_t left = nodes > fixed ? nodes - fixed : 0;
  const std::vector<ConfigNode> entries = list.items();
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].count != 0 || counts[g] != 0) continue;
    entries[g].at("share").fail("a share that gives the group at least one of the " +
                                    std::to_string(left) + " nodes left to shared groups",
                                format_number(groups[g].share) + " (0 nodes by largest remainder)");
  }
}

std::vector<FabricGroup> read_groups(const ConfigNode& fabric, const GpuCatalog& catalog,
                                     FabricShape& shape, Diagnostics& diagnostics) {
  const ConfigNode list = fabric.at("groups");
  if (fabric.has("gpus")) fabric.at("gpus").fail("either gpus or groups, not both");
  std::vector<FabricGroup> groups;
  for (const ConfigNode& entry : list.items())
    groups.push_back(read_group(entry, catalog, shape, diagnostics));
  if (groups.empty()) list.fail("at least one group");
  const bool shared = std::any_of(groups.begin(), groups.end(),
                                  [](const FabricGroup& group) { return group.count == 0; });
  if (!shared) {
    shape.nodes = counted_nodes(fabric, groups);
  } else {
    check_shares(list, groups, shape.nodes);
  }
  return groups;
}

std::size_t fat_tree_radix(const ConfigNode& fabric, std::size_t nodes) {
  const std::int64_t k = fabric.has("k")
                             ? fabric.integer("k")
                             : static_cast<std::int64_t>(smallest_fat_tree_radix(nodes));
  if (k % 2 != 0 || k < 2 || k > 256) fabric.at("k").fail(std::string(R::kRadix));
  if (static_cast<std::size_t>(k * k * k / 4) < nodes) {
    fabric.at("k").fail("a radix whose k³/4 hosts hold nodes = " + std::to_string(nodes),
                        std::to_string(k) + " (" + std::to_string(k * k * k / 4) + " hosts)");
  }
  return static_cast<std::size_t>(k);
}

/// Switches and switch-to-switch links the generated document holds.
struct FabricSize {
  std::size_t switches = 0;
  std::size_t links = 0;
};

FabricSize fabric_size(const FabricShape& shape) {
  if (shape.kind == FabricKind::kLeafSpine) {
    const std::size_t leaves = (shape.nodes + shape.hosts_per_leaf - 1) / shape.hosts_per_leaf;
    const std::size_t spines = leaves > 1 ? shape.spines : 0;
    return {leaves + spines, leaves * spines};
  }
  const std::size_t half = shape.k / 2;
  const std::size_t pods = ((shape.nodes + half - 1) / half + half - 1) / half;
  const std::size_t cores = pods > 1 ? half * half : 0;
  return {2 * pods * half + cores, pods * half * half * (pods > 1 ? 2 : 1)};
}

/// Refuses a shape whose document would exceed ConfigNode::kMaxValues, before it is written:
/// DocumentWriter writes 9 values a node, 5 a link and 1 a switch.
void check_document_size(const ConfigNode& fabric, const FabricShape& shape) {
  const FabricSize size = fabric_size(shape);
  const double values = 9.0 * static_cast<double>(shape.nodes) +
                        5.0 * static_cast<double>(size.links) + static_cast<double>(size.switches) +
                        16;
  if (values <= static_cast<double>(ConfigNode::kMaxValues)) return;
  fabric.fail("a shape whose topology fits one document of " +
                  std::to_string(ConfigNode::kMaxValues) +
                  " values (9 a node, 5 a switch link: fewer nodes, larger leaves, fewer spines "
                  "or a smaller k)",
              std::to_string(shape.nodes) + " nodes, " + std::to_string(size.switches) +
                  " switches and " + std::to_string(size.links) + " switch links");
}

}  // namespace

FabricShape read_fabric_shape(const ConfigNode& fabric, const GpuCatalog& gpus,
                              Diagnostics& diagnostics) {
  fabric.reject_unknown(accepted_keys("topology.fabric"));
  FabricShape shape;
  const std::string kind = fabric.text("kind");
  if (kind == "fat-tree") {
    shape.kind = FabricKind::kFatTree;
  } else if (kind != "leaf-spine") {
    fabric.at("kind").fail("leaf-spine or fat-tree", "'" + kind + "'");
  }
  shape.nodes = static_cast<std::size_t>(
      read_in(fabric, "nodes", R::kFabricNodes, 0,
              " (the topology generated for them must fit one document of " +
                  std::to_string(ConfigNode::kMaxValues) + " values)"));
  shape.hosts_per_leaf =
      static_cast<std::size_t>(read_in(fabric, "hosts_per_leaf", R::kHostsPerLeaf, 16));
  shape.spines = static_cast<std::size_t>(read_in(fabric, "spines", R::kSpines, 2));
  shape.oversubscription = fabric.at_least_or("oversubscription", 1, 1);
  shape.host_bandwidth_gbps = fabric.positive_or("host_bandwidth_gbps", 25);
  shape.host_latency_us = fabric.at_least_or("host_latency_us", 0, 2);
  shape.switch_latency_us = fabric.at_least_or("switch_latency_us", 0, 1);
  if (const auto mix = fabric.find("gpus")) shape.gpus = read_gpu_shares(*mix, gpus);
  shape.gpus_per_node = static_cast<int>(read_in(fabric, "gpus_per_node", R::kGpusPerNode, 1));
  shape.cpu_cores = static_cast<int>(read_in(fabric, "cpu_cores", R::kCpuCores, 16));
  shape.loss_rate = fabric.fraction_or("loss_rate", 0);
  check_typical_values(fabric, "topology.fabric", diagnostics);
  if (fabric.has("groups")) shape.groups = read_groups(fabric, gpus, shape, diagnostics);
  if (shape.kind == FabricKind::kFatTree) shape.k = fat_tree_radix(fabric, shape.nodes);
  check_document_size(fabric, shape);
  return shape;
}

std::vector<std::size_t> gpu_counts(const std::vector<GpuShare>& gpus, std::size_t nodes) {
  std::vector<std::size_t> counts(gpus.size());
  std::vector<std::pair<double, std::size_t>> remainders;
  std::size_t assigned = 0;
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    const double exact = gpus[g].fraction * static_cast<double>(nodes);
    counts[g] = static_cast<std::size_t>(std::floor(exact));
    assigned += counts[g];
    remainders.emplace_back(-(exact - std::floor(exact)), g);
  }
  std::stable_sort(remainders.begin(), remainders.end());
  for (std::size_t i = 0; assigned < nodes; ++i, ++assigned) ++counts[remainders[i].second];
  return counts;
}

std::vector<FabricGroup> host_groups(const FabricShape& shape) {
  if (!shape.groups.empty()) return shape.groups;
  std::vector<FabricGroup> groups;
  for (const GpuShare& share : shape.gpus) {
    groups.push_back({.gpu = share.gpu,
                      .share = share.fraction,
                      .gpus_per_node = shape.gpus_per_node,
                      .cpu_cores = shape.cpu_cores,
                      .host_bandwidth_gbps = shape.host_bandwidth_gbps,
                      .host_latency_us = shape.host_latency_us,
                      .loss_rate = shape.loss_rate});
  }
  return groups;
}

std::vector<std::size_t> group_counts(const std::vector<FabricGroup>& groups, std::size_t nodes) {
  std::size_t fixed = 0;
  std::vector<GpuShare> shares;
  for (const FabricGroup& group : groups) {
    fixed += group.count;
    if (group.count == 0) shares.push_back({group.gpu, group.share});
  }
  const std::size_t left = shares.empty() || nodes < fixed ? 0 : nodes - fixed;
  const std::vector<std::size_t> shared = gpu_counts(shares, left);
  std::vector<std::size_t> counts;
  counts.reserve(groups.size());
  std::size_t next = 0;
  for (const FabricGroup& group : groups)
    counts.push_back(group.count != 0 ? group.count : shared[next++]);
  return counts;
}

namespace {

/// A fabric's switches, hosts and switch links in document order, before they become a document
/// or a Topology.
struct FabricParts {
  struct Host {
    FabricGroup group;
    std::string uplink;
  };
  struct Link {
    std::string a;
    std::string b;
    double bandwidth_gbps = 0;
  };
  std::vector<std::string> switches;
  std::vector<Host> hosts;
  std::vector<Link> links;
};

void add_hosts(FabricParts& out, const FabricShape& shape, std::size_t per_switch,
               const std::vector<std::string>& host_switches) {
  const std::vector<FabricGroup> groups = host_groups(shape);
  const std::vector<std::size_t> counts = group_counts(groups, shape.nodes);
  std::size_t host = 0;
  for (std::size_t g = 0; g < counts.size(); ++g) {
    for (std::size_t i = 0; i < counts[g]; ++i, ++host)
      out.hosts.push_back({groups[g], host_switches[host / per_switch]});
  }
}

void leaf_spine(FabricParts& out, const FabricShape& shape) {
  const std::size_t leaves = (shape.nodes + shape.hosts_per_leaf - 1) / shape.hosts_per_leaf;
  std::vector<std::string> leaf_names;
  for (std::size_t l = 0; l < leaves; ++l) leaf_names.push_back("leaf-" + std::to_string(l));
  out.switches = leaf_names;
  const std::size_t spines = leaves > 1 ? shape.spines : 0;
  for (std::size_t s = 0; s < spines; ++s) out.switches.push_back("spine-" + std::to_string(s));
  add_hosts(out, shape, shape.hosts_per_leaf, leaf_names);
  // A leaf's uplinks together carry its hosts' bandwidth over the oversubscription.
  const double uplink_gbps = static_cast<double>(shape.hosts_per_leaf) * shape.host_bandwidth_gbps /
                             (shape.oversubscription * static_cast<double>(shape.spines));
  for (const std::string& leaf : leaf_names) {
    for (std::size_t s = 0; s < spines; ++s)
      out.links.push_back({leaf, "spine-" + std::to_string(s), uplink_gbps});
  }
}

void fat_tree(FabricParts& out, const FabricShape& shape) {
  const std::size_t half = shape.k / 2;
  const std::size_t edges_used = (shape.nodes + half - 1) / half;
  const std::size_t pods = (edges_used + half - 1) / half;
  const auto name = [](const char* kind, std::size_t a, std::size_t b) {
    return std::string(kind) + "-" + std::to_string(a) + "-" + std::to_string(b);
  };
  std::vector<std::string> edges;
  for (std::size_t p = 0; p < pods; ++p) {
    for (std::size_t i = 0; i < half; ++i) edges.push_back(name("edge", p, i));
  }
  out.switches = edges;
  for (std::size_t p = 0; p < pods; ++p) {
    for (std::size_t i = 0; i < half; ++i) out.switches.push_back(name("agg", p, i));
  }
  if (pods > 1) {
    for (std::size_t j = 0; j < half * half; ++j)
      out.switches.push_back(name("core", j / half, j % half));
  }
  add_hosts(out, shape, half, edges);
  const double uplink_gbps = shape.host_bandwidth_gbps / shape.oversubscription;
  for (std::size_t p = 0; p < pods; ++p) {
    for (std::size_t i = 0; i < half; ++i) {
      for (std::size_t m = 0; m < half; ++m) {
        out.links.push_back({name("edge", p, i), name("agg", p, m), uplink_gbps});
        if (pods > 1) out.links.push_back({name("agg", p, i), name("core", i, m), uplink_gbps});
      }
    }
  }
}

FabricParts fabric_parts(const FabricShape& shape) {
  FabricParts parts;
  if (shape.kind == FabricKind::kLeafSpine) {
    leaf_spine(parts, shape);
  } else {
    FabricShape sized = shape;
    if (sized.k == 0) sized.k = smallest_fat_tree_radix(sized.nodes);
    fat_tree(parts, sized);
  }
  return parts;
}

/// The value a generated document carries for `number`: format_number's 12 significant digits.
double as_written(double number) { return std::strtod(format_number(number).c_str(), nullptr); }

/// A link as the document's reader makes it from the written numbers.
LinkSpec written_link(double bandwidth_gbps, double latency_us, double loss_rate) {
  return {as_written(bandwidth_gbps), Duration{std::llround(as_written(latency_us) * 1e3)},
          as_written(loss_rate)};
}

}  // namespace

std::size_t smallest_fat_tree_radix(std::size_t nodes) {
  std::size_t k = 2;
  while (k * k * k / 4 < nodes) k += 2;
  return k;
}

std::string fabric_document(const std::string& name, const FabricShape& shape) {
  const FabricParts parts = fabric_parts(shape);
  // Names are plain ASCII, so no quoting is needed.
  std::ostringstream out;
  out << "name: " << name << "\nswitches:\n";
  for (const std::string& name : parts.switches) out << "  - " << name << '\n';
  out << "nodes:\n";
  for (std::size_t index = 0; index < parts.hosts.size(); ++index) {
    const FabricGroup& group = parts.hosts[index].group;
    out << "  - {name: node-" << index << ", gpu: " << group.gpu
        << ", gpus: " << group.gpus_per_node << ", cpu_cores: " << group.cpu_cores
        << ", link: {to: " << parts.hosts[index].uplink
        << ", bandwidth_gbps: " << format_number(group.host_bandwidth_gbps)
        << ", latency_us: " << format_number(group.host_latency_us);
    // Lossless uplinks are written as before, so that generated documents stay unchanged.
    if (group.loss_rate > 0) out << ", loss_rate: " << format_number(group.loss_rate);
    out << "}}\n";
  }
  if (!parts.links.empty()) out << "links:\n";
  for (const FabricParts::Link& link : parts.links) {
    out << "  - {a: " << link.a << ", b: " << link.b
        << ", bandwidth_gbps: " << format_number(link.bandwidth_gbps)
        << ", latency_us: " << format_number(shape.switch_latency_us) << "}\n";
  }
  return out.str();
}

Topology fabric_topology(const std::string& name, const FabricShape& shape,
                         const GpuCatalog& gpus) {
  const FabricParts parts = fabric_parts(shape);
  std::vector<NodeSpec> hosts;
  std::vector<Topology::NamedLink> links;
  for (std::size_t index = 0; index < parts.hosts.size(); ++index) {
    const FabricGroup& group = parts.hosts[index].group;
    const GpuSpec* gpu = gpus.find(group.gpu);
    DYNAMIX_CHECK(gpu != nullptr, "GPU type '" << group.gpu << "' is not in the catalog");
    hosts.push_back(
        worker_node("node-" + std::to_string(index), *gpu, group.gpus_per_node, group.cpu_cores));
    links.push_back(
        {hosts.back().name, parts.hosts[index].uplink,
         written_link(group.host_bandwidth_gbps, group.host_latency_us, group.loss_rate)});
  }
  for (const FabricParts::Link& link : parts.links) {
    links.push_back(
        {link.a, link.b, written_link(link.bandwidth_gbps, shape.switch_latency_us, 0)});
  }
  return Topology::from_parts(name, std::move(hosts), parts.switches, links);
}

}  // namespace dynamix
