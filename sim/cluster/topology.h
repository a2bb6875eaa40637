// The cluster as a graph: hosts with GPUs and CPU cores, switches, links, and routes between hosts.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/cluster/gpu_catalog.h"
#include "sim/network/link.h"

namespace dynamix {

class ConfigNode;
class Diagnostics;

/// Workers train; servers only hold parameter-server shards and may have no GPU.
enum class NodeRole { kWorker, kServer };

/// One host of the cluster.
struct NodeSpec {
  std::string name;
  NodeRole role = NodeRole::kWorker;
  /// Catalog name of its GPUs; empty for a server without GPUs.
  std::string gpu;
  /// GPUs on this host; its batch is split evenly over them.
  int gpus = 1;
  /// CPU cores that load and augment data (of its machine, when it shares one).
  int cpu_cores = 8;
  /// The machine this host runs on: several ranks (hosts of the topology) may share one, as
  /// processes of a CPU job do. Empty: a machine of its own.
  std::string machine;
  /// Ranks on its machine per core, at least 1: CPU compute and the host's links slow down by
  /// this factor when ranks outnumber cores. Set when the topology is assembled.
  double core_sharing = 1;
  /// Ranks on its machine (1 on a machine of its own). Set when the topology is assembled.
  int machine_ranks = 1;
  /// Its place among its machine's ranks, 0 … machine_ranks − 1 in host order. Set when the
  /// topology is assembled.
  int machine_slot = 0;
  /// The catalog entry named by `gpu`.
  GpuSpec gpu_spec;
};

/// A worker host with `gpus` GPUs of one catalog type, for programmatic topologies.
NodeSpec worker_node(std::string name, const GpuSpec& gpu, int gpus = 1, int cpu_cores = 8);

/// The shape of Topology::leaf_spine.
struct LeafSpineOptions {
  /// Hosts under each leaf (top-of-rack) switch, in host order; the last leaf may hold fewer.
  std::size_t hosts_per_leaf = 32;
  /// Spine switches; every leaf links to every spine.
  std::size_t spines = 2;
  /// Each host's link to its leaf.
  LinkSpec host_link{25, std::chrono::microseconds(2), 0};
  /// Each leaf-spine link.
  LinkSpec uplink{100, std::chrono::microseconds(1), 0};
};

/// Hosts (vertices 0..H-1, in file order), switches (vertices H..), and bidirectional links,
/// each stored as two directed links: a→b with an even LinkId, b→a with the next odd one.
/// Immutable once built, except for the cache of precomputed routes.
class Topology {
 public:
  /// An empty topology (no hosts); assign a loaded one to it.
  Topology();

  /// From a parsed topology document. Bad input is an InputError naming the file, line and
  /// key: unknown GPU type, unknown name in a link, bandwidth <= 0, loss outside [0, 1),
  /// duplicate names or links, a disconnected graph, unknown or missing keys. A document with
  /// a `fabric:` map instead of nodes describes the cluster by shape (fabric_generator.h).
  /// Implausible values go to `diagnostics`.
  static Topology load(const ConfigNode& root, const GpuCatalog& gpus, Diagnostics& diagnostics);
  /// From a YAML file (or "embedded:/topologies/....yaml").
  static Topology load(const std::string& path, const GpuCatalog& gpus, Diagnostics& diagnostics);
  /// The same outside a run: implausible values are warned about on stderr.
  static Topology load(const ConfigNode& root, const GpuCatalog& gpus);
  static Topology load(const std::string& path, const GpuCatalog& gpus);
  /// Every host linked to one switch named "switch".
  static Topology star(std::vector<NodeSpec> hosts, const LinkSpec& host_link);
  /// Hosts under leaf switches "leaf-0".., every leaf linked to every spine "spine-0"..
  static Topology leaf_spine(std::vector<NodeSpec> hosts, const LeafSpineOptions& options);

  /// A link between two hosts or switches named as in from_parts.
  struct NamedLink {
    std::string a;
    std::string b;
    LinkSpec spec;
  };
  /// Hosts (in order), switches and links given whole, as a document lists them; for generated
  /// topologies, whose names and links are right by construction (a broken invariant, not
  /// InputError, if not, or if the graph is disconnected).
  static Topology from_parts(std::string name, std::vector<NodeSpec> hosts,
                             std::vector<std::string> switches,
                             const std::vector<NamedLink>& links);

  const std::string& name() const { return name_; }
  /// All hosts in file order; a host's index is its id everywhere else.
  const std::vector<NodeSpec>& hosts() const { return hosts_; }
  /// Indices of the hosts with role worker, in file order (the default ring order).
  std::vector<std::size_t> workers() const;
  /// Indices of the hosts with role server, in file order.
  std::vector<std::size_t> servers() const;
  std::optional<std::size_t> find_host(std::string_view name) const;
  const std::vector<std::string>& switches() const { return switches_; }

  /// Directed links, indexed by LinkId.
  const std::vector<LinkSpec>& links() const { return links_; }
  /// The host or switch a directed link leaves from and arrives at.
  const std::string& link_source(LinkId link) const;
  const std::string& link_target(LinkId link) const;
  /// The same topology with every link's loss_rate 0: the counterfactual that says how much
  /// of a run's time packet loss costs.
  Topology without_loss() const;
  /// The directed link from `from` to `to` (host or switch names), if they are linked.
  std::optional<LinkId> find_link(std::string_view from, std::string_view to) const;

  /// Computes the fewest-hop route of every pair (from_host, to_host) not yet known: one
  /// breadth-first search per distinct source attachment point. Among equal-hop routes one is
  /// picked by a hash of the pair, spreading flows over parallel spines as ECMP does.
  void precompute_routes(std::span<const std::pair<std::size_t, std::size_t>> host_pairs);
  bool has_route(std::size_t from_host, std::size_t to_host) const;
  /// A precomputed route; empty from a host to itself.
  const Route& route(std::size_t from_host, std::size_t to_host) const;

 private:
  struct Graph;
  struct Edge {
    std::size_t a;
    std::size_t b;
    LinkSpec spec;
  };

  /// An explicit document; implausible values go to `diagnostics` (none: a generated document).
  static Topology load_explicit(const ConfigNode& root, const GpuCatalog& gpus,
                                Diagnostics* diagnostics);
  static Topology assemble(std::string name, std::vector<NodeSpec> hosts,
                           std::vector<std::string> switches, const std::vector<Edge>& edges);
  /// A vertex that vertex 0 cannot reach, if any.
  std::optional<std::size_t> unreachable_vertex() const;
  std::size_t route_root(std::size_t from_host) const;
  Route trace_route(std::size_t from_host, std::size_t to_host, std::size_t root,
                    const std::vector<std::uint32_t>& hops) const;
  LinkId link_between(std::size_t from_vertex, std::size_t to_vertex) const;

  std::string name_;
  std::vector<NodeSpec> hosts_;
  std::vector<std::string> switches_;
  std::vector<std::string> vertex_names_;
  std::map<std::string, std::size_t, std::less<>> vertex_index_;
  std::vector<LinkSpec> links_;
  std::vector<std::pair<std::size_t, std::size_t>> link_ends_;
  std::unordered_map<std::uint64_t, LinkId> link_ids_;
  std::shared_ptr<const Graph> graph_;
  std::unordered_map<std::uint64_t, Route> routes_;
};

}  // namespace dynamix
