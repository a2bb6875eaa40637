// Clusters described by shape: a leaf-spine or k-ary fat-tree fabric with a GPU mix by fractions
// or node groups (each its own GPU, node shape, NIC and loss), generated into an ordinary topology
// document, so that one file scales from 8 to 4,096 nodes with one --set
// (topology.fabric.nodes=4096).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/cluster/gpu_catalog.h"

namespace dynamix {

class ConfigNode;
class Diagnostics;
class Topology;

enum class FabricKind {
  /// Leaves (top-of-rack switches) of hosts_per_leaf hosts, every leaf linked to every spine.
  kLeafSpine,
  /// Al-Fares et al. (SIGCOMM'08): k pods of k/2 edge and k/2 aggregation switches, (k/2)²
  /// core switches, k/2 hosts per edge switch, k³/4 hosts at most.
  kFatTree,
};

/// One GPU type and the share of hosts that carry it.
struct GpuShare {
  std::string gpu;
  double fraction = 0;
};

/// Hosts of one kind inside a fabric: a GPU type with its own node shape and uplink, sized by a
/// share of the fabric's nodes or by a fixed count.
struct FabricGroup {
  std::string gpu;
  /// Share of the nodes that fixed-count groups leave; 0 when `count` sizes the group.
  double share = 0;
  /// A fixed number of nodes, or 0 when the group takes its share.
  std::size_t count = 0;
  int gpus_per_node = 1;
  int cpu_cores = 16;
  double host_bandwidth_gbps = 25;
  double host_latency_us = 2;
  /// Packet loss on the group's host uplinks, in [0, 1).
  double loss_rate = 0;
};

/// A fabric by shape; read from a topology document's `fabric:` map.
struct FabricShape {
  FabricKind kind = FabricKind::kLeafSpine;
  /// Worker hosts, filled in switch order (leaf 0 first).
  std::size_t nodes = 32;
  /// Leaf-spine: hosts under each leaf; the last leaf may hold fewer.
  std::size_t hosts_per_leaf = 16;
  /// Leaf-spine: spine switches.
  std::size_t spines = 2;
  /// Fat-tree: switch radix, even; 0 picks the smallest that holds `nodes`.
  std::size_t k = 0;
  /// Host bandwidth into a leaf (edge) switch over its uplink bandwidth; 1 is non-blocking.
  double oversubscription = 1;
  double host_bandwidth_gbps = 25;
  double host_latency_us = 2;
  /// Latency of each switch-to-switch link.
  double switch_latency_us = 1;
  /// GPU types by share of hosts, in host order (whole racks of one type first); the shares sum
  /// to 1 and are rounded to host counts by largest remainder.
  std::vector<GpuShare> gpus = {{"A100", 1.0}};
  int gpus_per_node = 1;
  int cpu_cores = 16;
  /// Packet loss on every host uplink unless a group gives its own.
  double loss_rate = 0;
  /// Host groups in host order; when given they replace `gpus`, and `gpus_per_node`,
  /// `cpu_cores`, `host_*` and `loss_rate` above are only their defaults. Switch links are
  /// sized from the fabric's own `host_bandwidth_gbps`.
  std::vector<FabricGroup> groups;
};

/// The `fabric:` map of a topology document; InputError naming the key for a value out of
/// range, an unknown kind or GPU, shares that do not sum to 1, or more nodes than a fat-tree
/// of radix k holds. Implausible values (the fabric's and its groups') go to `diagnostics`.
FabricShape read_fabric_shape(const ConfigNode& fabric, const GpuCatalog& gpus,
                              Diagnostics& diagnostics);

/// Hosts of each GPU type in host order: the shares of `nodes`, rounded by largest remainder.
std::vector<std::size_t> gpu_counts(const std::vector<GpuShare>& gpus, std::size_t nodes);

/// The shape's host groups: its `groups`, or one group per `gpus` share with the fabric's node
/// shape.
std::vector<FabricGroup> host_groups(const FabricShape& shape);

/// Hosts in each group: fixed counts first, the rest of `nodes` split by share with largest
/// remainder rounding; a share group may get 0 (read_fabric_shape refuses that).
std::vector<std::size_t> group_counts(const std::vector<FabricGroup>& groups, std::size_t nodes);

/// The smallest even radix k whose fat-tree holds `nodes` hosts (k³/4 >= nodes).
std::size_t smallest_fat_tree_radix(std::size_t nodes);

/// The explicit topology document (name, switches, nodes, links) that the shape describes; a
/// fat-tree of radix 0 gets the smallest that holds its nodes.
std::string fabric_document(const std::string& name, const FabricShape& shape);

/// The topology that fabric_document's document describes, built without writing or parsing
/// it (the scenario sampler draws one per episode), with the numbers the document would carry.
/// `shape` must be valid (read_fabric_shape's checks) and its GPUs in `gpus`.
Topology fabric_topology(const std::string& name, const FabricShape& shape, const GpuCatalog& gpus);

}  // namespace dynamix
