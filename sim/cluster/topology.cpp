// Topology: loading, validation, connectivity and fewest-hop routes over a Boost.Graph.
#include "sim/cluster/topology.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/connected_components.hpp>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "sim/cluster/fabric_generator.h"
#include "sim/cluster/topology_knobs.h"
#include "sim/core/check.h"
#include "sim/core/random.h"
#include "sim/io/closest_name.h"
#include "sim/io/config_node.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {

struct Topology::Graph {
  boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS> adjacency;
};

namespace {

constexpr std::string_view kIndexPlaceholder = "{i}";
using R = TopologyRanges;
constexpr std::uint32_t kUnreached = std::numeric_limits<std::uint32_t>::max();

std::uint64_t pair_key(std::size_t a, std::size_t b, std::size_t n) {
  return static_cast<std::uint64_t>(a) * n + b;
}

std::string quoted(const std::string& text) { return "'" + text + "'"; }

Duration read_latency(const ConfigNode& entry) {
  entry.at("latency_us");
  const double microseconds = read_in(entry, "latency_us", R::kLinkLatencyUs, 0, " us");
  return Duration{std::llround(microseconds * 1e3)};
}

LinkSpec read_link(const ConfigNode& entry) {
  entry.at("bandwidth_gbps");
  const double bandwidth_gbps = read_in(entry, "bandwidth_gbps", R::kLinkGbps, 0, " Gb/s");
  const Duration latency = read_latency(entry);
  return LinkSpec{bandwidth_gbps, latency, entry.fraction_or("loss_rate", 0)};
}

/// "a100-{i}" with count 3 → a100-0, a100-1, a100-2.
std::vector<std::string> expand_names(const ConfigNode& entry) {
  const ConfigNode name_node = entry.at("name");
  const std::string name = name_node.as_text();
  const bool numbered = name.find(kIndexPlaceholder) != std::string::npos;
  if (entry.has("count") && !numbered) name_node.fail("a name containing {i} when count is given");
  if (numbered) entry.at("count");
  // The range the reference (topology_knobs.cpp) states, in the same words.
  const auto count = static_cast<std::int64_t>(read_in(entry, "count", R::kGroupCount, 1));
  if (!numbered) return {name};
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    std::string expanded = name;
    for (auto at = expanded.find(kIndexPlaceholder); at != std::string::npos;
         at = expanded.find(kIndexPlaceholder, at)) {
      expanded.replace(at, kIndexPlaceholder.size(), std::to_string(i));
    }
    names.push_back(std::move(expanded));
  }
  return names;
}

/// A topology document with every name resolved. Vertices are hosts, then switches.
struct ParsedTopology {
  std::string name;
  std::vector<NodeSpec> hosts;
  std::vector<std::string> switches;
  /// The entry that declared each vertex, for errors about it.
  std::vector<ConfigNode> declarations;
  std::vector<std::tuple<std::size_t, std::size_t, LinkSpec>> links;
};

/// Reads a topology document, resolving names as it goes.
class TopologyReader {
 public:
  /// `diagnostics`: where implausible values go; none for a generated document (its values were
  /// checked in its fabric, and its switch links carry many hosts' bandwidth).
  TopologyReader(const GpuCatalog& gpus, Diagnostics* diagnostics)
      : gpus_(gpus), diagnostics_(diagnostics) {}

  ParsedTopology read(const ConfigNode& root) {
    std::vector<std::string> keys = accepted_keys("topology");
    std::erase(keys, "fabric");
    root.reject_unknown(keys);
    if (const auto switches = root.find("switches")) {
      for (const ConfigNode& entry : switches->items()) read_switch(entry);
    }
    const ConfigNode nodes = root.at("nodes");
    for (const ConfigNode& entry : nodes.items()) read_nodes(entry);
    if (hosts_.empty()) nodes.fail("at least one node");
    if (const auto links = root.find("links")) {
      for (const ConfigNode& entry : links->items()) read_links(entry);
    }
    ParsedTopology parsed{root.text_or("name", root.source()),
                          std::move(hosts_),
                          std::move(switches_),
                          std::move(host_entries_),
                          {}};
    parsed.declarations.insert(parsed.declarations.end(), switch_entries_.begin(),
                               switch_entries_.end());
    for (const auto& [a, b, spec] : edges_) {
      parsed.links.emplace_back(vertex(a, parsed.hosts.size()), vertex(b, parsed.hosts.size()),
                                spec);
    }
    return parsed;
  }

 private:
  void declare(const ConfigNode& name_node, const std::string& name, std::size_t ref) {
    const auto [it, inserted] = refs_.emplace(name, Declared{ref, name_node.line()});
    if (!inserted) {
      name_node.fail("a unique name", quoted(name) + " (already defined at line " +
                                          std::to_string(it->second.line) + ")");
    }
  }

  void read_switch(const ConfigNode& entry) {
    if (entry.is_scalar()) {
      declare(entry, entry.as_text(), kSwitchFlag | switches_.size());
      switches_.push_back(entry.as_text());
      switch_entries_.push_back(entry);
      return;
    }
    entry.reject_unknown(accepted_keys("topology.switches[]"));
    std::vector<std::size_t>& group = groups_[entry.text("name")];
    for (std::string& name : expand_names(entry)) {
      const std::size_t ref = kSwitchFlag | switches_.size();
      declare(entry.at("name"), name, ref);
      group.push_back(ref);
      switches_.push_back(std::move(name));
      switch_entries_.push_back(entry);
    }
  }

  void read_nodes(const ConfigNode& entry) {
    entry.reject_unknown(accepted_keys("topology.nodes[]"));
    NodeSpec node;
    const std::string role = entry.text_or("role", "worker");
    if (role == "server") {
      node.role = NodeRole::kServer;
    } else if (role != "worker") {
      entry.at("role").fail("worker or server");
    }
    const bool needs_gpu = node.role == NodeRole::kWorker || entry.has("gpu");
    if (needs_gpu) {
      const ConfigNode gpu = entry.at("gpu");
      const GpuSpec* spec = gpus_.find(gpu.as_text());
      if (spec == nullptr) {
        gpu.fail("a device in the catalog (" + join(gpus_.names()) + ")",
                 excerpt(gpu.as_text()) + did_you_mean(gpu.as_text(), gpus_.names()));
      }
      node.gpu = spec->name;
      node.gpu_spec = *spec;
    }
    node.gpus =
        static_cast<int>(read_in(entry, "gpus", R::kNodeGpus, needs_gpu ? 1 : 0, R::kWithGpu));
    if (node.gpus > 0 && !needs_gpu) entry.at("gpu");
    if (node.gpus == 0 && needs_gpu) {
      entry.at("gpus").fail(R::kNodeGpus.expected() + std::string(R::kWithGpu));
    }
    entry.at("cpu_cores");
    node.cpu_cores = static_cast<int>(read_in(entry, "cpu_cores", R::kCpuCores, 1));
    node.machine = entry.text_or("machine", "");
    if (!node.machine.empty()) check_machine_cores(entry, node);

    std::optional<std::size_t> uplink_switch;
    LinkSpec uplink{};
    if (const auto link = entry.find("link")) {
      link->reject_unknown(accepted_keys("topology.nodes[]", "link"));
      const ConfigNode to = link->at("to");
      const auto found = refs_.find(to.as_text());
      if (found == refs_.end() || (found->second.ref & kSwitchFlag) == 0) {
        to.fail("the name of a switch (" + join(switches_) + ")");
      }
      uplink_switch = found->second.ref;
      uplink = read_link(*link);
      if (diagnostics_) check_typical_values(*link, "topology.nodes[]", *diagnostics_, "link");
    }

    std::vector<std::size_t>& group = groups_[entry.text("name")];
    for (std::string& name : expand_names(entry)) {
      const std::size_t ref = hosts_.size();
      declare(entry.at("name"), name, ref);
      group.push_back(ref);
      node.name = std::move(name);
      hosts_.push_back(node);
      host_entries_.push_back(entry);
      if (uplink_switch) add_edge(entry, ref, *uplink_switch, uplink);
    }
  }

  /// Ranks of one machine share its cores: they must agree on how many it has.
  void check_machine_cores(const ConfigNode& entry, const NodeSpec& node) {
    const auto [known, added] = machine_cores_.emplace(node.machine, node.cpu_cores);
    if (!added && known->second != node.cpu_cores) {
      entry.at("cpu_cores")
          .fail("the cpu_cores of machine " + quoted(node.machine) + " given before (" +
                std::to_string(known->second) + ")");
    }
  }

  std::vector<std::size_t> endpoints(const ConfigNode& entry, std::string_view key) const {
    const ConfigNode endpoint = entry.at(key);
    const std::string name = endpoint.as_text();
    if (const auto found = refs_.find(name); found != refs_.end()) return {found->second.ref};
    if (const auto group = groups_.find(name); group != groups_.end()) return group->second;
    endpoint.fail("the name of a node, switch or {i} group");
  }

  void read_links(const ConfigNode& entry) {
    entry.reject_unknown(accepted_keys("topology.links[]"));
    const std::vector<std::size_t> from = endpoints(entry, "a");
    const std::vector<std::size_t> to = endpoints(entry, "b");
    const LinkSpec spec = read_link(entry);
    if (diagnostics_) check_typical_values(entry, "topology.links[]", *diagnostics_);
    for (std::size_t a : from) {
      for (std::size_t b : to) add_edge(entry, a, b, spec);
    }
  }

  const std::string& ref_name(std::size_t ref) const {
    return (ref & kSwitchFlag) != 0 ? switches_[ref & ~kSwitchFlag] : hosts_[ref].name;
  }

  void add_edge(const ConfigNode& entry, std::size_t a, std::size_t b, const LinkSpec& spec) {
    if (a == b) {
      entry.fail("a link between two different vertices",
                 "one from " + quoted(ref_name(a)) + " to itself");
    }
    if (!linked_.insert(std::minmax(a, b)).second) {
      entry.fail("one link between " + quoted(ref_name(a)) + " and " + quoted(ref_name(b)),
                 "a second one");
    }
    edges_.emplace_back(a, b, spec);
  }

  // Switches are numbered from 0 with this flag until the host count is known.
  static constexpr std::size_t kSwitchFlag = std::size_t{1} << 62;
  static std::size_t vertex(std::size_t ref, std::size_t host_count) {
    return (ref & kSwitchFlag) != 0 ? host_count + (ref & ~kSwitchFlag) : ref;
  }

  struct Declared {
    std::size_t ref;
    int line;
  };
  const GpuCatalog& gpus_;
  Diagnostics* diagnostics_;
  std::vector<NodeSpec> hosts_;
  std::vector<std::string> switches_;
  std::vector<ConfigNode> host_entries_;
  std::vector<ConfigNode> switch_entries_;
  std::vector<std::tuple<std::size_t, std::size_t, LinkSpec>> edges_;
  std::map<std::string, Declared, std::less<>> refs_;
  std::map<std::string, std::vector<std::size_t>, std::less<>> groups_;
  std::set<std::pair<std::size_t, std::size_t>> linked_;
  std::map<std::string, int, std::less<>> machine_cores_;
};

/// Sets each host's core_sharing (ranks on its machine per core, at least 1), machine_ranks
/// and machine_slot.
void share_machines(std::vector<NodeSpec>& hosts) {
  std::map<std::string, int, std::less<>> ranks;
  for (NodeSpec& host : hosts) {
    if (!host.machine.empty()) host.machine_slot = ranks[host.machine]++;
  }
  for (NodeSpec& host : hosts) {
    const int on_machine = host.machine.empty() ? 1 : ranks[host.machine];
    host.machine_ranks = on_machine;
    host.core_sharing = std::max(1.0, static_cast<double>(on_machine) / host.cpu_cores);
  }
}

}  // namespace

NodeSpec worker_node(std::string name, const GpuSpec& gpu, int gpus, int cpu_cores) {
  NodeSpec node;
  node.name = std::move(name);
  node.gpu = gpu.name;
  node.gpus = gpus;
  node.cpu_cores = cpu_cores;
  node.gpu_spec = gpu;
  return node;
}

Topology::Topology() : graph_(std::make_shared<const Graph>()) {}

Topology Topology::load(const ConfigNode& root, const GpuCatalog& gpus, Diagnostics& diagnostics) {
  if (root.has("fabric")) {
    root.reject_unknown({"name", "fabric"});
    const ConfigNode fabric = root.at("fabric");
    const std::string document = fabric_document(root.text_or("name", "fabric"),
                                                 read_fabric_shape(fabric, gpus, diagnostics));
    return load_explicit(ConfigNode::parse(document, root.source() + " (generated from fabric)"),
                         gpus, nullptr);
  }
  return load_explicit(root, gpus, &diagnostics);
}

Topology Topology::load_explicit(const ConfigNode& root, const GpuCatalog& gpus,
                                 Diagnostics* diagnostics) {
  ParsedTopology parsed = TopologyReader(gpus, diagnostics).read(root);
  std::vector<Edge> edges;
  edges.reserve(parsed.links.size());
  for (const auto& [a, b, spec] : parsed.links) edges.push_back({a, b, spec});
  Topology topology =
      assemble(std::move(parsed.name), std::move(parsed.hosts), std::move(parsed.switches), edges);
  if (const auto unreachable = topology.unreachable_vertex()) {
    parsed.declarations[*unreachable].fail(
        "a connected topology", quoted(topology.vertex_names_[*unreachable]) +
                                    " unreachable from " + quoted(topology.vertex_names_[0]));
  }
  return topology;
}

Topology Topology::load(const std::string& path, const GpuCatalog& gpus, Diagnostics& diagnostics) {
  return load(ConfigNode::parse(read_text(path), path), gpus, diagnostics);
}

Topology Topology::load(const ConfigNode& root, const GpuCatalog& gpus) {
  Diagnostics diagnostics = Diagnostics::on_stderr(false);
  return load(root, gpus, diagnostics);
}

Topology Topology::load(const std::string& path, const GpuCatalog& gpus) {
  Diagnostics diagnostics = Diagnostics::on_stderr(false);
  return load(path, gpus, diagnostics);
}

Topology Topology::without_loss() const {
  Topology lossless = *this;
  for (LinkSpec& link : lossless.links_) link.loss_rate = 0;
  return lossless;
}

Topology Topology::star(std::vector<NodeSpec> hosts, const LinkSpec& host_link) {
  std::vector<Edge> edges;
  for (std::size_t h = 0; h < hosts.size(); ++h) edges.push_back({h, hosts.size(), host_link});
  Topology topology = assemble("star", std::move(hosts), {"switch"}, edges);
  DYNAMIX_CHECK(!topology.unreachable_vertex(), "a star is connected");
  return topology;
}

Topology Topology::leaf_spine(std::vector<NodeSpec> hosts, const LeafSpineOptions& options) {
  DYNAMIX_CHECK(options.hosts_per_leaf > 0, "hosts_per_leaf " << options.hosts_per_leaf);
  const std::size_t host_count = hosts.size();
  const std::size_t leaves = (host_count + options.hosts_per_leaf - 1) / options.hosts_per_leaf;
  DYNAMIX_CHECK(leaves <= 1 || options.spines > 0, leaves << " leaves need at least one spine");
  std::vector<std::string> switches;
  for (std::size_t l = 0; l < leaves; ++l) switches.push_back("leaf-" + std::to_string(l));
  for (std::size_t s = 0; s < options.spines; ++s) switches.push_back("spine-" + std::to_string(s));
  std::vector<Edge> edges;
  for (std::size_t h = 0; h < host_count; ++h) {
    edges.push_back({h, host_count + h / options.hosts_per_leaf, options.host_link});
  }
  for (std::size_t l = 0; l < leaves; ++l) {
    for (std::size_t s = 0; s < options.spines; ++s) {
      edges.push_back({host_count + l, host_count + leaves + s, options.uplink});
    }
  }
  Topology topology = assemble("leaf-spine", std::move(hosts), std::move(switches), edges);
  DYNAMIX_CHECK(!topology.unreachable_vertex(), "a leaf-spine fabric is connected");
  return topology;
}

Topology Topology::from_parts(std::string name, std::vector<NodeSpec> hosts,
                              std::vector<std::string> switches,
                              const std::vector<NamedLink>& links) {
  std::unordered_map<std::string_view, std::size_t> vertex;
  for (std::size_t h = 0; h < hosts.size(); ++h) vertex.emplace(hosts[h].name, h);
  for (std::size_t s = 0; s < switches.size(); ++s) vertex.emplace(switches[s], hosts.size() + s);
  auto index = [&](const std::string& name) {
    const auto found = vertex.find(name);
    DYNAMIX_CHECK(found != vertex.end(), "a link to '" << name << "', which is not declared");
    return found->second;
  };
  std::vector<Edge> edges;
  edges.reserve(links.size());
  for (const NamedLink& link : links) edges.push_back({index(link.a), index(link.b), link.spec});
  Topology topology = assemble(std::move(name), std::move(hosts), std::move(switches), edges);
  DYNAMIX_CHECK(!topology.unreachable_vertex(),
                "topology '" << topology.name() << "' is connected");
  return topology;
}

Topology Topology::assemble(std::string name, std::vector<NodeSpec> hosts,
                            std::vector<std::string> switches, const std::vector<Edge>& edges) {
  Topology topology;
  topology.name_ = std::move(name);
  topology.hosts_ = std::move(hosts);
  share_machines(topology.hosts_);
  topology.switches_ = std::move(switches);
  for (const NodeSpec& host : topology.hosts_) topology.vertex_names_.push_back(host.name);
  for (const std::string& name : topology.switches_) topology.vertex_names_.push_back(name);
  const std::size_t vertices = topology.vertex_names_.size();
  for (std::size_t v = 0; v < vertices; ++v) {
    const bool unique = topology.vertex_index_.emplace(topology.vertex_names_[v], v).second;
    DYNAMIX_CHECK(unique, "duplicate vertex name '" << topology.vertex_names_[v] << "'");
  }
  auto graph = std::make_shared<Graph>();
  graph->adjacency = decltype(graph->adjacency)(vertices);
  for (const Edge& edge : edges) {
    DYNAMIX_CHECK(edge.a < vertices && edge.b < vertices && edge.a != edge.b,
                  "edge " << edge.a << "-" << edge.b << " with " << vertices << " vertices");
    DYNAMIX_CHECK(edge.spec.bandwidth_gbps > 0 && edge.spec.loss_rate >= 0 &&
                      edge.spec.loss_rate < 1 && edge.spec.latency >= Duration::zero(),
                  "link " << edge.a << "-" << edge.b << " bandwidth " << edge.spec.bandwidth_gbps
                          << " loss " << edge.spec.loss_rate);
    const auto forward = static_cast<LinkId>(topology.links_.size());
    const bool unique =
        topology.link_ids_.emplace(pair_key(edge.a, edge.b, vertices), forward).second &&
        topology.link_ids_.emplace(pair_key(edge.b, edge.a, vertices), forward + 1).second;
    DYNAMIX_CHECK(unique, "two links between vertices " << edge.a << " and " << edge.b);
    boost::add_edge(edge.a, edge.b, graph->adjacency);
    // A rank that shares its machine's cores moves bytes at its share of them.
    double sharing = 1;
    for (const std::size_t end : {edge.a, edge.b}) {
      if (end < topology.hosts_.size())
        sharing = std::max(sharing, topology.hosts_[end].core_sharing);
    }
    LinkSpec spec = edge.spec;
    spec.bandwidth_gbps /= sharing;
    topology.links_.push_back(spec);
    topology.links_.push_back(spec);
    topology.link_ends_.emplace_back(edge.a, edge.b);
    topology.link_ends_.emplace_back(edge.b, edge.a);
  }
  topology.graph_ = std::move(graph);
  return topology;
}

std::optional<std::size_t> Topology::unreachable_vertex() const {
  const auto& adjacency = graph_->adjacency;
  std::vector<std::size_t> component(boost::num_vertices(adjacency));
  if (component.size() < 2) return std::nullopt;
  const auto count = boost::connected_components(
      adjacency, boost::make_iterator_property_map(component.begin(),
                                                   boost::get(boost::vertex_index, adjacency)));
  if (count <= 1) return std::nullopt;
  for (std::size_t v = 1; v < component.size(); ++v) {
    if (component[v] != component[0]) return v;
  }
  return std::nullopt;
}

std::vector<std::size_t> Topology::workers() const {
  std::vector<std::size_t> result;
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    if (hosts_[h].role == NodeRole::kWorker) result.push_back(h);
  }
  return result;
}

std::vector<std::size_t> Topology::servers() const {
  std::vector<std::size_t> result;
  for (std::size_t h = 0; h < hosts_.size(); ++h) {
    if (hosts_[h].role == NodeRole::kServer) result.push_back(h);
  }
  return result;
}

std::optional<std::size_t> Topology::find_host(std::string_view name) const {
  const auto found = vertex_index_.find(name);
  if (found == vertex_index_.end() || found->second >= hosts_.size()) return std::nullopt;
  return found->second;
}

const std::string& Topology::link_source(LinkId link) const {
  DYNAMIX_CHECK(link < link_ends_.size(), "link " << link << " of " << link_ends_.size());
  return vertex_names_[link_ends_[link].first];
}

const std::string& Topology::link_target(LinkId link) const {
  DYNAMIX_CHECK(link < link_ends_.size(), "link " << link << " of " << link_ends_.size());
  return vertex_names_[link_ends_[link].second];
}

std::optional<LinkId> Topology::find_link(std::string_view from, std::string_view to) const {
  const auto a = vertex_index_.find(from);
  const auto b = vertex_index_.find(to);
  if (a == vertex_index_.end() || b == vertex_index_.end()) return std::nullopt;
  const auto found = link_ids_.find(pair_key(a->second, b->second, vertex_names_.size()));
  if (found == link_ids_.end()) return std::nullopt;
  return found->second;
}

LinkId Topology::link_between(std::size_t from_vertex, std::size_t to_vertex) const {
  const auto found = link_ids_.find(pair_key(from_vertex, to_vertex, vertex_names_.size()));
  DYNAMIX_CHECK(found != link_ids_.end(), "no link " << from_vertex << "->" << to_vertex);
  return found->second;
}

std::size_t Topology::route_root(std::size_t from_host) const {
  // A host with one link reaches everything through it: searching from its neighbour lets
  // every host under one switch share a single search.
  const auto& adjacency = graph_->adjacency;
  if (boost::out_degree(from_host, adjacency) != 1) return from_host;
  return *boost::adjacent_vertices(from_host, adjacency).first;
}

void Topology::precompute_routes(std::span<const std::pair<std::size_t, std::size_t>> host_pairs) {
  const std::size_t host_count = hosts_.size();
  std::map<std::size_t, std::vector<std::pair<std::size_t, std::size_t>>> by_root;
  for (const auto& [from, to] : host_pairs) {
    DYNAMIX_CHECK(from < host_count && to < host_count,
                  "route " << from << "->" << to << " with " << host_count << " hosts");
    const std::uint64_t key = pair_key(from, to, host_count);
    if (routes_.contains(key)) continue;
    if (from == to) {
      routes_.emplace(key, Route{});
      continue;
    }
    by_root[route_root(from)].emplace_back(from, to);
  }
  const auto& adjacency = graph_->adjacency;
  std::vector<std::uint32_t> hops(boost::num_vertices(adjacency));
  const auto hop_map =
      boost::make_iterator_property_map(hops.begin(), boost::get(boost::vertex_index, adjacency));
  for (const auto& [root, pairs] : by_root) {
    std::fill(hops.begin(), hops.end(), kUnreached);
    hops[root] = 0;
    boost::breadth_first_search(adjacency, root,
                                boost::visitor(boost::make_bfs_visitor(
                                    boost::record_distances(hop_map, boost::on_tree_edge()))));
    for (const auto& [from, to] : pairs) {
      routes_.emplace(pair_key(from, to, host_count), trace_route(from, to, root, hops));
    }
  }
}

Route Topology::trace_route(std::size_t from_host, std::size_t to_host, std::size_t root,
                            const std::vector<std::uint32_t>& hops) const {
  const auto& adjacency = graph_->adjacency;
  DYNAMIX_CHECK(hops[to_host] != kUnreached, "host " << to_host << " unreachable");
  std::uint64_t hash = pair_key(from_host, to_host, hosts_.size());
  Route route;
  std::vector<std::size_t> closer;
  for (std::size_t v = to_host; v != root;) {
    closer.clear();
    for (auto [it, end] = boost::adjacent_vertices(v, adjacency); it != end; ++it) {
      if (hops[*it] + 1 == hops[v]) closer.push_back(*it);
    }
    DYNAMIX_CHECK(!closer.empty(), "no predecessor of vertex " << v);
    const std::size_t previous = closer[splitmix64(hash) % closer.size()];
    route.push_back(link_between(previous, v));
    v = previous;
  }
  if (root != from_host) route.push_back(link_between(from_host, root));
  std::reverse(route.begin(), route.end());
  return route;
}

bool Topology::has_route(std::size_t from_host, std::size_t to_host) const {
  return routes_.contains(pair_key(from_host, to_host, hosts_.size()));
}

const Route& Topology::route(std::size_t from_host, std::size_t to_host) const {
  const auto found = routes_.find(pair_key(from_host, to_host, hosts_.size()));
  DYNAMIX_CHECK(found != routes_.end(),
                "route " << from_host << "->" << to_host << " was not precomputed");
  return found->second;
}

}  // namespace dynamix
