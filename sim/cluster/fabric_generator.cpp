// Fabric generation: a shape read from YAML, written out as switches, nodes and links.
#include "sim/cluster/fabric_generator.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

#include "sim/io/config_node.h"
#include "sim/io/json_writer.h"

namespace dynamix {
namespace {

/// The generated topology holds about 10 values a node (a node entry and its uplink), and a YAML
/// document at most ConfigNode::kMaxValues: 65,536 nodes stay well inside.
constexpr std::int64_t kMaxNodes = 1 << 16;

std::vector<GpuShare> read_gpu_shares(const ConfigNode& node, const GpuCatalog& catalog) {
  std::vector<GpuShare> shares;
  double sum = 0;
  for (const std::string& gpu : node.keys()) {
    if (catalog.find(gpu) == nullptr)
      node.at(gpu).fail("a GPU type in the catalog", "'" + gpu + "'");
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

std::size_t fat_tree_radix(const ConfigNode& fabric, std::size_t nodes) {
  std::int64_t k = fabric.count_or("k", 0, 0);
  if (k == 0) k = static_cast<std::int64_t>(smallest_fat_tree_radix(nodes));
  if (k % 2 != 0 || k > 256) fabric.at("k").fail("an even radix <= 256");
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

FabricShape read_fabric_shape(const ConfigNode& fabric, const GpuCatalog& gpus) {
  fabric.reject_unknown({"kind", "nodes", "hosts_per_leaf", "spines", "k", "oversubscription",
                         "host_bandwidth_gbps", "host_latency_us", "switch_latency_us", "gpus",
                         "gpus_per_node", "cpu_cores"});
  FabricShape shape;
  const std::string kind = fabric.text("kind");
  if (kind == "fat-tree") {
    shape.kind = FabricKind::kFatTree;
  } else if (kind != "leaf-spine") {
    fabric.at("kind").fail("leaf-spine or fat-tree", "'" + kind + "'");
  }
  const std::int64_t nodes = fabric.count_or("nodes", 1, 0);
  if (nodes > kMaxNodes) {
    fabric.at("nodes").fail("at most " + std::to_string(kMaxNodes) +
                            " (the topology generated for them must fit one document of " +
                            std::to_string(ConfigNode::kMaxValues) + " values)");
  }
  shape.nodes = static_cast<std::size_t>(nodes);
  shape.hosts_per_leaf = static_cast<std::size_t>(fabric.int_or("hosts_per_leaf", 1, 4096, 16));
  shape.spines = static_cast<std::size_t>(fabric.int_or("spines", 1, 1024, 2));
  if (shape.kind == FabricKind::kFatTree) shape.k = fat_tree_radix(fabric, shape.nodes);
  shape.oversubscription = fabric.at_least_or("oversubscription", 1, 1);
  shape.host_bandwidth_gbps = fabric.positive_or("host_bandwidth_gbps", 25);
  shape.host_latency_us = fabric.at_least_or("host_latency_us", 0, 2);
  shape.switch_latency_us = fabric.at_least_or("switch_latency_us", 0, 1);
  if (const auto mix = fabric.find("gpus")) shape.gpus = read_gpu_shares(*mix, gpus);
  shape.gpus_per_node = fabric.int_or("gpus_per_node", 1, 1024, 1);
  shape.cpu_cores = fabric.int_or("cpu_cores", 1, 1 << 16, 16);
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

namespace {

/// Writes the document's lists; names are plain ASCII, so no quoting is needed.
class DocumentWriter {
 public:
  explicit DocumentWriter(const FabricShape& shape) : shape_(shape) {}

  void add_switch(const std::string& name) { switches_ << "  - " << name << '\n'; }
  void add_host(std::size_t index, const std::string& gpu, const std::string& uplink) {
    nodes_ << "  - {name: node-" << index << ", gpu: " << gpu << ", gpus: " << shape_.gpus_per_node
           << ", cpu_cores: " << shape_.cpu_cores << ", link: {to: " << uplink
           << ", bandwidth_gbps: " << format_number(shape_.host_bandwidth_gbps)
           << ", latency_us: " << format_number(shape_.host_latency_us) << "}}\n";
  }
  void add_link(const std::string& a, const std::string& b, double bandwidth_gbps) {
    links_ << "  - {a: " << a << ", b: " << b
           << ", bandwidth_gbps: " << format_number(bandwidth_gbps)
           << ", latency_us: " << format_number(shape_.switch_latency_us) << "}\n";
  }
  std::string text(const std::string& name) const {
    return "name: " + name + "\nswitches:\n" + switches_.str() + "nodes:\n" + nodes_.str() +
           (links_.str().empty() ? "" : "links:\n" + links_.str());
  }

 private:
  const FabricShape& shape_;
  std::ostringstream switches_, nodes_, links_;
};

void add_hosts(DocumentWriter& out, const FabricShape& shape, std::size_t per_switch,
               const std::vector<std::string>& host_switches) {
  const std::vector<std::size_t> counts = gpu_counts(shape.gpus, shape.nodes);
  std::size_t host = 0;
  for (std::size_t g = 0; g < counts.size(); ++g) {
    for (std::size_t i = 0; i < counts[g]; ++i, ++host)
      out.add_host(host, shape.gpus[g].gpu, host_switches[host / per_switch]);
  }
}

void leaf_spine(DocumentWriter& out, const FabricShape& shape) {
  const std::size_t leaves = (shape.nodes + shape.hosts_per_leaf - 1) / shape.hosts_per_leaf;
  std::vector<std::string> leaf_names;
  for (std::size_t l = 0; l < leaves; ++l) leaf_names.push_back("leaf-" + std::to_string(l));
  for (const std::string& leaf : leaf_names) out.add_switch(leaf);
  const std::size_t spines = leaves > 1 ? shape.spines : 0;
  for (std::size_t s = 0; s < spines; ++s) out.add_switch("spine-" + std::to_string(s));
  add_hosts(out, shape, shape.hosts_per_leaf, leaf_names);
  // A leaf's uplinks together carry its hosts' bandwidth over the oversubscription.
  const double uplink_gbps = static_cast<double>(shape.hosts_per_leaf) * shape.host_bandwidth_gbps /
                             (shape.oversubscription * static_cast<double>(shape.spines));
  for (const std::string& leaf : leaf_names) {
    for (std::size_t s = 0; s < spines; ++s)
      out.add_link(leaf, "spine-" + std::to_string(s), uplink_gbps);
  }
}

void fat_tree(DocumentWriter& out, const FabricShape& shape) {
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
  for (const std::string& edge : edges) out.add_switch(edge);
  for (std::size_t p = 0; p < pods; ++p) {
    for (std::size_t i = 0; i < half; ++i) out.add_switch(name("agg", p, i));
  }
  if (pods > 1) {
    for (std::size_t j = 0; j < half * half; ++j) out.add_switch(name("core", j / half, j % half));
  }
  add_hosts(out, shape, half, edges);
  const double uplink_gbps = shape.host_bandwidth_gbps / shape.oversubscription;
  for (std::size_t p = 0; p < pods; ++p) {
    for (std::size_t i = 0; i < half; ++i) {
      for (std::size_t m = 0; m < half; ++m) {
        out.add_link(name("edge", p, i), name("agg", p, m), uplink_gbps);
        if (pods > 1) out.add_link(name("agg", p, i), name("core", i, m), uplink_gbps);
      }
    }
  }
}

}  // namespace

std::size_t smallest_fat_tree_radix(std::size_t nodes) {
  std::size_t k = 2;
  while (k * k * k / 4 < nodes) k += 2;
  return k;
}

std::string fabric_document(const std::string& name, const FabricShape& shape) {
  DocumentWriter out(shape);
  if (shape.kind == FabricKind::kLeafSpine) {
    leaf_spine(out, shape);
  } else {
    FabricShape sized = shape;
    if (sized.k == 0) sized.k = smallest_fat_tree_radix(sized.nodes);
    fat_tree(out, sized);
  }
  return out.text(name);
}

}  // namespace dynamix
