// The topology document's knob tables, and the accepted keys and typical checks read from them.
#include "sim/cluster/topology_knobs.h"

#include <algorithm>
#include <utility>

#include "sim/core/check.h"
#include "sim/io/config_node.h"
#include "sim/io/diagnostics.h"

namespace dynamix {
namespace {

using Rows = KnobRows<TopologyKeys>;
using R = TopologyRanges;

const std::string kNicSource =
    "typical <= 1600 Gb/s: 1.6 Tb/s Ethernet (IEEE 802.3dj), 800 Gb/s NICs (NVIDIA ConnectX-8); "
    "a node's NVLink is sync.intra_node_gbps";
const std::string kLatencySource =
    "typical <= 1000 us: a switch hop costs ~1 us and a data-center round trip stays under 1 ms";
const std::string kLossSource =
    "typical <= 0.01: data-center drop rates are ~1e-5 to 1e-4 (Guo et al., Pingmesh, "
    "SIGCOMM'15); a 1e-3 loss already lets TCP's 200 ms minimum timeout dominate";

Typical nic_gbps() {
  return {.high = 1600, .above = "above any NIC we know", .slips = {1e3, 1e6, 1e9}};
}

Typical latency_us() {
  return {.high = 1000, .above = "above any latency inside a data center", .slips = {1e3, 1e6}};
}

Typical loss_rate() {
  return {.high = 0.01,
          .above = "above any loss a training fabric runs with",
          .hint = "a fraction: 0.01 is 1%",
          .slips = {100}};
}

TopologyKnob row(KnobText text, std::string type, std::string range,
                 std::optional<Typical> typical = std::nullopt) {
  TopologyKnob knob = Rows::described(std::move(text), std::move(type), std::move(range));
  knob.typical = std::move(typical);
  return knob;
}

/// The link rows of a node's uplink (`prefix` "link.") or of a links[] entry (`prefix` "").
std::vector<TopologyKnob> link_rows(const std::string& prefix, const std::string& noun) {
  return {row({.key = prefix + "bandwidth_gbps",
               .unit = "Gb/s",
               .meaning = "line rate of " + noun + ", each direction",
               .source = kNicSource,
               .default_value = "required"},
              "number", R::kLinkGbps.expected(), nic_gbps()),
          row({.key = prefix + "latency_us",
               .unit = "us",
               .meaning = "one-way propagation and switching latency of " + noun,
               .source = kLatencySource,
               .default_value = "required"},
              "number", R::kLinkLatencyUs.expected(), latency_us()),
          row({.key = prefix + "loss_rate",
               .meaning = "packet loss of " + noun + ", a fraction (0.001 is 0.1%)",
               .source = kLossSource,
               .default_value = "0"},
              "number", "a number in [0, 1)", loss_rate())};
}

TopologyKnobTable top_level() {
  return Rows::table(
      "topology",
      "a topology document (a file, or the scenario's inline topology: map): either nodes with "
      "optional switches and links, or one generated fabric",
      {row({.key = "name",
            .meaning = "the topology's name in outputs",
            .default_value = "the file"},
           "text", "text"),
       row({.key = "switches",
            .meaning = "switch names, or {name, count} groups (topology.switches[])",
            .default_value = "none"},
           "list", "unique names"),
       row({.key = "nodes",
            .meaning = "the hosts, as node groups (topology.nodes[]); --set topology.nodes.N.KEY "
                       "edits the N-th GROUP (entry of the list, each with its count), not the "
                       "N-th node",
            .default_value = "required without fabric"},
           "list", "at least one node"),
       row({.key = "links",
            .meaning = "links beside the nodes' uplinks (topology.links[])",
            .default_value = "none"},
           "list", "links between distinct vertices, one per pair"),
       row({.key = "fabric",
            .meaning = "a generated leaf-spine or fat-tree instead of nodes, switches and links "
                       "(topology.fabric); only name may stand beside it",
            .default_value = "none"},
           "map", "the keys of topology.fabric")});
}

std::vector<TopologyKnob> node_rows() {
  return {
      row({.key = "name",
           .meaning = "the node's name; with count, a pattern whose {i} is replaced by 0..count-1",
           .default_value = "required"},
          "text", "a unique name, with {i} when count is given"),
      row({.key = "count",
           .meaning = "nodes this entry declares (a node group), named by its {i} pattern",
           .default_value = "1"},
          "integer", R::kGroupCount.expected()),
      row({.key = "role",
           .meaning = "workers train; servers hold parameter-server shards only",
           .default_value = "worker"},
          "one of worker, server", "one of worker, server"),
      row({.key = "gpu",
           .meaning = "the node's device: a GPU that `dynamix gpus` lists, or one of the "
                      "scenario's devices:",
           .default_value = "required for workers"},
          "text", "a device of the catalog"),
      row({.key = "gpus",
           .meaning = "devices on the node; its batch is split evenly over them",
           .default_value = "1 with a gpu, else 0"},
          "integer", R::kNodeGpus.expected() + std::string(R::kWithGpu)),
      row({.key = "cpu_cores",
           .meaning = "CPU cores that load data (shared by the ranks of one machine)",
           .default_value = "required"},
          "integer", R::kCpuCores.expected()),
      row({.key = "machine",
           .meaning = "a machine several ranks share (its cores and link); they must agree on "
                      "cpu_cores",
           .default_value = "none (a machine of its own)"},
          "text", "text"),
      row({.key = "link.to", .meaning = "the switch of the node's uplink", .default_value = "none"},
          "text", "the name of a switch"),
  };
}

TopologyKnobTable nodes() {
  std::vector<TopologyKnob> rows = node_rows();
  for (TopologyKnob& knob : link_rows("link.", "the node's uplink"))
    rows.push_back(std::move(knob));
  return Rows::table("topology.nodes[]",
                     "one node group of an explicit topology: count nodes of one GPU type, each "
                     "with an uplink to a switch",
                     std::move(rows));
}

TopologyKnobTable switches() {
  return Rows::table(
      "topology.switches[]", "a switch name, or a group of switches named by a {i} pattern",
      {row({.key = "name",
            .meaning = "the switch's name, or a {i} pattern with count",
            .default_value = "required"},
           "text", "a unique name"),
       row({.key = "count", .meaning = "switches this entry declares", .default_value = "1"},
           "integer", R::kGroupCount.expected())});
}

TopologyKnobTable links() {
  std::vector<TopologyKnob> rows = {
      row({.key = "a",
           .meaning = "one end: a node, a switch, or a {i} group (every member is linked)",
           .default_value = "required"},
          "text", "a name of the topology"),
      row({.key = "b", .meaning = "the other end, as a", .default_value = "required"}, "text",
          "a name of the topology")};
  for (TopologyKnob& knob : link_rows("", "the link")) rows.push_back(std::move(knob));
  return Rows::table("topology.links[]", "a link between switches or hosts", std::move(rows));
}

/// A fabric group's or the fabric's node shape and uplink; `owner` says whose default applies.
std::vector<TopologyKnob> host_rows(const std::string& owner, const std::string& defaults) {
  const auto given = [&](const std::string& value) { return defaults.empty() ? value : defaults; };
  return {row({.key = "gpus_per_node",
               .meaning = "GPUs on each node of " + owner,
               .default_value = given("1")},
              "integer", R::kGpusPerNode.expected()),
          row({.key = "cpu_cores",
               .meaning = "CPU cores of each node of " + owner,
               .default_value = given("16")},
              "integer", R::kCpuCores.expected()),
          row({.key = "host_bandwidth_gbps",
               .unit = "Gb/s",
               .meaning = "line rate of each node's uplink of " + owner,
               .source = kNicSource,
               .default_value = given("25")},
              "number", "a number > 0", nic_gbps()),
          row({.key = "host_latency_us",
               .unit = "us",
               .meaning = "latency of each node's uplink of " + owner,
               .source = kLatencySource,
               .default_value = given("2")},
              "number", "a number >= 0", latency_us()),
          row({.key = "loss_rate",
               .meaning = "packet loss on each node's uplink of " + owner +
                          ", a fraction (0.001 is "
                          "0.1%)",
               .source = kLossSource,
               .default_value = given("0")},
              "number", "a number in [0, 1)", loss_rate())};
}

std::vector<TopologyKnob> fabric_shape_rows() {
  return {row({.key = "kind",
               .meaning = "leaf-spine, or a k-ary fat-tree (Al-Fares et al., SIGCOMM'08)",
               .default_value = "required"},
              "one of leaf-spine, fat-tree", "one of leaf-spine, fat-tree"),
          row({.key = "nodes",
               .meaning = "worker nodes (not groups): the one key that scales the cluster; share "
                          "groups split what fixed-count groups leave",
               .default_value = "the groups' sum when every group has nodes"},
              "integer", R::kFabricNodes.expected()),
          row({.key = "hosts_per_leaf",
               .meaning = "leaf-spine: nodes under each leaf switch",
               .default_value = "16"},
              "integer", R::kHostsPerLeaf.expected()),
          row({.key = "spines",
               .meaning = "leaf-spine: spine switches, each linked to every leaf",
               .default_value = "2"},
              "integer", R::kSpines.expected()),
          row({.key = "k",
               .meaning = "fat-tree: switch radix, k^3/4 nodes at most",
               .default_value = "the smallest that holds nodes"},
              "integer", std::string(R::kRadix)),
          row({.key = "oversubscription",
               .meaning = "nodes' bandwidth into a leaf (edge) switch over its uplinks' (1: "
                          "non-blocking)",
               .default_value = "1"},
              "number", "a number >= 1"),
          row({.key = "switch_latency_us",
               .unit = "us",
               .meaning = "latency of each switch-to-switch link",
               .source = kLatencySource,
               .default_value = "1"},
              "number", "a number >= 0", latency_us()),
          row({.key = "gpus",
               .meaning = "GPU mix by share of nodes ({A100: 0.5, V100: 0.5}); no groups beside it",
               .default_value = "A100: 1"},
              "map", "GPU: share, shares in (0, 1] summing to 1"),
          row({.key = "groups",
               .meaning = "node groups, each with its own GPU, node shape, uplink and loss "
                          "(topology.fabric.groups[]); no gpus beside it",
               .default_value = "none"},
              "list", "at least one group")};
}

TopologyKnobTable fabric_table() {
  std::vector<TopologyKnob> shape = fabric_shape_rows();
  std::vector<TopologyKnob> host = host_rows("the fabric (and each group's default)", "");
  // In the order unknown-key errors have always listed them.
  std::vector<TopologyKnob> rows(shape.begin(), shape.begin() + 6);
  for (const std::size_t at : {2, 3}) rows.push_back(host[at]);
  rows.insert(rows.end(), shape.begin() + 6, shape.begin() + 8);
  for (const std::size_t at : {0, 1, 4}) rows.push_back(host[at]);
  rows.push_back(shape[8]);
  return Rows::table("topology.fabric",
                     "a generated fabric: one file scales from 8 to 65,536 nodes with --set "
                     "topology.fabric.nodes=N",
                     std::move(rows));
}

TopologyKnobTable fabric_groups_table() {
  std::vector<TopologyKnob> rows = {
      row({.key = "gpu", .meaning = "the group's GPU type", .default_value = "required"}, "text",
          "a GPU of the catalog"),
      row({.key = "share",
           .meaning = "share of the nodes fixed-count groups leave (exactly one of share, nodes)",
           .default_value = "none"},
          "number", std::string(R::kGroupShare)),
      row({.key = "nodes",
           .meaning = "a fixed node count (exactly one of share, nodes)",
           .default_value = "none"},
          "integer", R::kFabricNodes.expected())};
  for (TopologyKnob& knob : host_rows("the group", "the fabric's")) rows.push_back(std::move(knob));
  return Rows::table("topology.fabric.groups[]",
                     "one group of a fabric's nodes, in node order (whole leaves of one group "
                     "first)",
                     std::move(rows));
}

}  // namespace

const std::vector<TopologyKnobTable>& topology_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const std::vector<TopologyKnobTable> tables = {
      top_level(), nodes(), switches(), links(), fabric_table(), fabric_groups_table()};
  return tables;
}

const TopologyKnobTable& topology_table(std::string_view section) {
  const auto& tables = topology_knobs();
  const auto found =
      std::find_if(tables.begin(), tables.end(),
                   [&](const TopologyKnobTable& table) { return table.section == section; });
  DYNAMIX_CHECK(found != tables.end(), "no topology section " << section);
  return *found;
}

std::vector<std::string> accepted_keys(std::string_view section, std::string_view prefix) {
  const std::string head =
      std::string(section) + "." + (prefix.empty() ? std::string() : std::string(prefix) + ".");
  std::vector<std::string> keys;
  for (const TopologyKnob& knob : topology_table(section).knobs) {
    if (!knob.key.starts_with(head)) continue;
    std::string key = knob.key.substr(head.size());
    key = key.substr(0, key.find('.'));
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  return keys;
}

void check_typical_values(const ConfigNode& map, std::string_view section, Diagnostics& diagnostics,
                          std::string_view prefix) {
  const std::string head =
      std::string(section) + "." + (prefix.empty() ? std::string() : std::string(prefix) + ".");
  for (const TopologyKnob& knob : topology_table(section).knobs) {
    if (!knob.typical || !knob.key.starts_with(head)) continue;
    const std::string key = knob.key.substr(head.size());
    if (key.find('.') == std::string::npos)
      diagnostics.check_typical(map, key, knob.unit, *knob.typical);
  }
}

}  // namespace dynamix
