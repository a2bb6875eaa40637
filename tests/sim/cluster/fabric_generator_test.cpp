// Fabrics by shape: leaf-spine and fat-tree sizes, uplink bandwidth from the oversubscription,
// GPU shares as host counts, one --set from 8 to 4,096 nodes, and errors that name the key.
#include "sim/cluster/fabric_generator.h"

#include <doctest/doctest.h>

#include <map>
#include <string>

#include "sim/cluster/topology.h"
#include "sim/io/config_node.h"
#include "sim/scenario/scenario.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;

const GpuCatalog& catalog() {
  static const GpuCatalog gpus = GpuCatalog::builtin();
  return gpus;
}

Topology fabric(const std::string& shape) {
  return Topology::load(ConfigNode::parse("name: f\nfabric: {" + shape + "}\n", "f.yaml"),
                        catalog());
}

std::map<std::string, int> gpu_histogram(const Topology& topology) {
  std::map<std::string, int> counts;
  for (const NodeSpec& host : topology.hosts()) ++counts[host.gpu];
  return counts;
}

TEST_CASE("A leaf-spine fabric fills leaves in order and links every leaf to every spine") {
  const Topology topology = fabric(
      "kind: leaf-spine, nodes: 40, hosts_per_leaf: 16, spines: 4, oversubscription: 2, "
      "host_bandwidth_gbps: 25, gpus: {A100: 0.5, V100: 0.25, T4: 0.25}");
  CHECK(topology.hosts().size() == 40);
  CHECK(topology.switches().size() == 3 + 4);
  // 40 host links and 3 leaves × 4 spines, each stored in both directions.
  CHECK(topology.links().size() == 2 * (40 + 12));
  const auto uplink = topology.find_link("leaf-2", "spine-3");
  REQUIRE(uplink.has_value());
  // 16 hosts × 25 Gb/s over 2:1 oversubscription, shared by 4 spines.
  CHECK(topology.links()[*uplink].bandwidth_gbps == doctest::Approx(50));
  CHECK(topology.find_link("node-39", "leaf-2").has_value());
  CHECK(gpu_histogram(topology) ==
        std::map<std::string, int>{{"A100", 20}, {"T4", 10}, {"V100", 10}});
  CHECK(topology.hosts().front().gpu == "A100");
  CHECK(topology.hosts().back().gpu == "T4");
}

TEST_CASE("A fabric too large for its generated topology is refused with the reason") {
  CHECK(error_of([] { fabric("kind: leaf-spine, nodes: 100000"); })
            .find("nodes: expected an integer in [1, 65536] (the topology generated for them must "
                  "fit one "
                  "document of 1000000 values), found '100000'") != std::string::npos);
  // Within the node bound, the switch links can still overflow the document: refused up front,
  // naming the shape, not at the value that overflowed.
  CHECK(error_of([] { fabric("kind: leaf-spine, nodes: 65536, hosts_per_leaf: 3, spines: 4"); })
            .find("fabric: expected a shape whose topology fits one document of 1000000 values "
                  "(9 a node, 5 a switch link: fewer nodes, larger leaves, fewer spines or a "
                  "smaller k), found 65536 nodes, 21850 switches and 87384 switch links") !=
        std::string::npos);
  CHECK(error_of([] { fabric("kind: fat-tree, nodes: 65536"); }).find("131072 switch links") !=
        std::string::npos);
  CHECK(fabric("kind: leaf-spine, nodes: 4096, hosts_per_leaf: 1, spines: 4").links().size() ==
        2 * (4096 + 4096 * 4));
}

TEST_CASE("One leaf holds a small cluster without spines") {
  const Topology topology = fabric("kind: leaf-spine, nodes: 8, hosts_per_leaf: 16");
  CHECK(topology.hosts().size() == 8);
  CHECK(topology.switches() == std::vector<std::string>{"leaf-0"});
}

TEST_CASE("A fat-tree of radix 4 holds 16 hosts under 8 edge, 8 aggregation and 4 core switches") {
  const Topology topology = fabric("kind: fat-tree, k: 4, nodes: 16, oversubscription: 1");
  CHECK(topology.hosts().size() == 16);
  CHECK(topology.switches().size() == 20);
  CHECK(topology.links().size() == 2 * (16 + 16 + 16));
  CHECK(topology.find_link("edge-3-1", "agg-3-0").has_value());
  CHECK(topology.find_link("agg-3-1", "core-1-0").has_value());
  // Without k, the smallest radix that holds the nodes: 100 hosts need k = 8 (128 hosts).
  const Topology picked = fabric("kind: fat-tree, nodes: 100");
  CHECK(picked.hosts().size() == 100);
  CHECK(picked.find_link("agg-0-3", "core-3-3").has_value());
}

TEST_CASE("GPU shares become host counts by largest remainder, ties to the first listed") {
  const std::vector<GpuShare> mix = {{"A100", 0.5}, {"V100", 0.25}, {"T4", 0.25}};
  CHECK(gpu_counts(mix, 10) == std::vector<std::size_t>{5, 3, 2});
  CHECK(gpu_counts(mix, 8) == std::vector<std::size_t>{4, 2, 2});
  CHECK(gpu_counts({{"A100", 1.0}}, 7) == std::vector<std::size_t>{7});
}

TEST_CASE("The shipped leaf-spine study scales from 8 to 4,096 nodes with one --set") {
  const std::string path = std::string(DYNAMIX_SOURCE_DIR) + "/scenarios/studies/leafspine.yaml";
  CHECK(load_scenario(path, {"topology.fabric.nodes=8"}).worker_hosts.size() == 8);
  const Scenario large = load_scenario(path, {"topology.fabric.nodes=4096"});
  CHECK(large.worker_hosts.size() == 4096);
  CHECK(large.topology.switches().size() == 256 + 4);
}

TEST_CASE("A fabric with a bad shape is refused with the key that is wrong") {
  CHECK(error_of([] { fabric("kind: torus, nodes: 8"); }).find("fabric.kind") != std::string::npos);
  CHECK(error_of([] {
          fabric("kind: leaf-spine, nodes: 8, gpus: {A100: 0.5, T4: 0.4}");
        }).find("sum to 1") != std::string::npos);
  CHECK(error_of([] { fabric("kind: leaf-spine, nodes: 8, gpus: {B200X: 1}"); }).find("B200X") !=
        std::string::npos);
  CHECK(error_of([] { fabric("kind: fat-tree, k: 4, nodes: 17"); }).find("fabric.k") !=
        std::string::npos);
  CHECK(error_of([] { fabric("kind: leaf-spine, nodes: 0"); }).find("fabric.nodes") !=
        std::string::npos);
  CHECK(error_of([] { fabric("kind: leaf-spine, nodes: 8, colour: red"); }).find("colour") !=
        std::string::npos);
}

/// The researcher's trial cluster: a quarter 2×A100 nodes, half V100 nodes on lossy uplinks, a
/// quarter RTX 3090 nodes on slower NICs.
const std::string kGroups =
    "kind: leaf-spine, hosts_per_leaf: 4, host_bandwidth_gbps: 100, groups: ["
    "{gpu: A100, gpus_per_node: 2, share: 0.25, host_bandwidth_gbps: 200}, "
    "{gpu: V100, share: 0.5, loss_rate: 1e-4}, "
    "{gpu: RTX3090, share: 0.25, host_bandwidth_gbps: 25, cpu_cores: 8}]";

TEST_CASE("Fabric groups give each group its own GPU, GPUs per node, NIC speed and loss") {
  const Topology topology = fabric("nodes: 12, " + kGroups);
  REQUIRE(topology.hosts().size() == 12);
  CHECK(gpu_histogram(topology) ==
        std::map<std::string, int>{{"A100", 3}, {"RTX3090", 3}, {"V100", 6}});
  const NodeSpec& a100 = topology.hosts()[0];
  CHECK((a100.gpu == "A100" && a100.gpus == 2 && a100.cpu_cores == 16));
  CHECK(topology.hosts()[3].gpu == "V100");
  CHECK(topology.hosts()[3].gpus == 1);
  CHECK(topology.hosts()[11].cpu_cores == 8);
  const auto bandwidth = [&](const char* host, const char* leaf) {
    return topology.links()[*topology.find_link(host, leaf)].bandwidth_gbps;
  };
  const auto loss = [&](const char* host, const char* leaf) {
    return topology.links()[*topology.find_link(host, leaf)].loss_rate;
  };
  CHECK(bandwidth("node-0", "leaf-0") == 200);
  CHECK(bandwidth("node-4", "leaf-1") == 100);
  CHECK(bandwidth("node-11", "leaf-2") == 25);
  CHECK(loss("node-0", "leaf-0") == 0);
  CHECK(loss("node-5", "leaf-1") == doctest::Approx(1e-4));
  CHECK(loss("node-9", "leaf-2") == 0);
  // Switch links are sized from the fabric's host_bandwidth_gbps, whatever the groups' NICs.
  CHECK(topology.links()[*topology.find_link("leaf-0", "spine-0")].bandwidth_gbps ==
        doctest::Approx(4 * 100 / 2.0));
}

TEST_CASE("Fabric groups scale together with the one nodes key, by largest remainder") {
  CHECK(gpu_histogram(fabric("nodes: 13, " + kGroups)) ==
        std::map<std::string, int>{{"A100", 3}, {"RTX3090", 3}, {"V100", 7}});
  CHECK(gpu_histogram(fabric("nodes: 1024, " + kGroups)) ==
        std::map<std::string, int>{{"A100", 256}, {"RTX3090", 256}, {"V100", 512}});
  const std::vector<FabricGroup> groups = {
      {.gpu = "A100", .share = 0.5}, {.gpu = "V100", .share = 0.25}, {.gpu = "T4", .share = 0.25}};
  CHECK(group_counts(groups, 10) == std::vector<std::size_t>{5, 3, 2});
}

TEST_CASE("Fabric groups of fixed counts keep their size while share groups scale") {
  const std::string mixed =
      "kind: leaf-spine, groups: [{gpu: A100, nodes: 2, gpus_per_node: 2}, {gpu: V100, share: "
      "1}]";
  CHECK(gpu_histogram(fabric("nodes: 12, " + mixed)) ==
        std::map<std::string, int>{{"A100", 2}, {"V100", 10}});
  CHECK(gpu_histogram(fabric("nodes: 64, " + mixed)) ==
        std::map<std::string, int>{{"A100", 2}, {"V100", 62}});
  // Counts alone give the node count; a nodes key that disagrees is refused.
  const std::string counted =
      "kind: leaf-spine, groups: [{gpu: A100, nodes: 2}, {gpu: V100, nodes: 6}, {gpu: T4, "
      "nodes: 4}]";
  CHECK(fabric(counted).hosts().size() == 12);
  CHECK(error_of([&] { fabric("nodes: 10, " + counted); }) ==
        "f.yaml:2: fabric.nodes: expected the sum of the groups' nodes (12) when no group has a "
        "share, found '10'");
}

TEST_CASE("Fabric groups are refused with the group and key that is wrong") {
  CHECK(error_of([] {
          fabric(
              "kind: leaf-spine, nodes: 8, groups: [{gpu: A100, share: 0.5}, {gpu: V100, "
              "share: 0.4}]");
        }) == "f.yaml:2: fabric.groups: expected group shares that sum to 1, found a sum of 0.9");
  CHECK(error_of([] {
          fabric(
              "kind: leaf-spine, nodes: 8, groups: [{gpu: A100, share: 0.95}, {gpu: V100, "
              "share: 0.05}]");
        }) ==
        "f.yaml:2: fabric.groups.1.share: expected a share that gives the group at least "
        "one of the 8 nodes left to shared groups, found 0.05 (0 nodes by largest "
        "remainder)");
  CHECK(error_of([] {
          fabric(
              "kind: leaf-spine, nodes: 4, groups: [{gpu: A100, nodes: 4}, {gpu: V100, share: "
              "1}]");
        })
            .find("fabric.groups.1.share: expected a share that gives the group at least one of "
                  "the 0 nodes") != std::string::npos);
  CHECK(error_of([] {
          fabric("kind: leaf-spine, nodes: 8, groups: [{gpu: A100, share: 1, nodes: 2}]");
        }) ==
        "f.yaml:2: fabric.groups.0: expected a group sized by exactly one of share or "
        "nodes, found both");
  CHECK(error_of([] {
          fabric("kind: leaf-spine, nodes: 8, gpus: {A100: 1}, groups: [{gpu: A100, share: 1}]");
        }) == "f.yaml:2: fabric.gpus: expected either gpus or groups, not both, found a map");
  CHECK(error_of([] { fabric("kind: leaf-spine, nodes: 8, groups: [{gpu: A10O, share: 1}]"); }) ==
        "f.yaml:2: fabric.groups.0.gpu: expected a GPU type in the catalog, found 'A10O'; "
        "did you mean 'A100'?");
  CHECK(error_of([] {
          fabric("kind: leaf-spine, nodes: 8, groups: [{gpu: A100, share: 1, loss_rate: 2}]");
        }).find("fabric.groups.0.loss_rate") != std::string::npos);
  CHECK(error_of([] {
          fabric("kind: leaf-spine, nodes: 8, groups: [{gpu: A100, share: 1, link_gbps: 2}]");
        }).find("unknown key 'link_gbps'") != std::string::npos);
  CHECK(error_of([] {
          fabric("kind: leaf-spine, nodes: 8, groups: []");
        }).find("fabric.groups: expected at least one group") != std::string::npos);
}

TEST_CASE("A fabric-wide loss_rate reaches every host uplink; without it the links are lossless") {
  const Topology lossy = fabric("kind: leaf-spine, nodes: 4, loss_rate: 0.001");
  CHECK(lossy.links()[*lossy.find_link("node-3", "leaf-0")].loss_rate == doctest::Approx(0.001));
  const Topology clean = fabric("kind: leaf-spine, nodes: 4");
  CHECK(clean.links()[*clean.find_link("node-3", "leaf-0")].loss_rate == 0);
}

}  // namespace
}  // namespace dynamix

namespace dynamix {

TEST_CASE("A fabric built directly is the topology its generated document describes") {
  FabricShape leaf_spine;
  leaf_spine.nodes = 37;
  leaf_spine.hosts_per_leaf = 8;
  leaf_spine.spines = 3;
  leaf_spine.oversubscription = 2.718281828459045;
  leaf_spine.host_bandwidth_gbps = 13.3333333333333;
  leaf_spine.gpus = {{"A100", 0.35}, {"V100", 0.4}, {"T4", 0.25}};
  FabricShape fat_tree;
  fat_tree.kind = FabricKind::kFatTree;
  fat_tree.nodes = 50;
  fat_tree.oversubscription = 1.7;
  fat_tree.host_bandwidth_gbps = 31.4159265358979;
  fat_tree.switch_latency_us = 0.3333333;
  fat_tree.gpus = {{"V100", 1.0}};
  FabricShape grouped;
  grouped.nodes = 20;
  FabricGroup a100;
  a100.gpu = "A100";
  a100.share = 1.0;
  a100.gpus_per_node = 4;
  a100.loss_rate = 0.0012345678901;
  FabricGroup t4;
  t4.gpu = "T4";
  t4.count = 3;
  t4.cpu_cores = 7;
  t4.host_bandwidth_gbps = 9.87654321;
  grouped.groups = {a100, t4};
  for (const FabricShape& shape : {leaf_spine, fat_tree, grouped}) {
    const Topology built = fabric_topology("sampled", shape, catalog());
    const Topology parsed = Topology::load(
        ConfigNode::parse(fabric_document("sampled", shape), "generated.yaml"), catalog());
    REQUIRE(built.hosts().size() == parsed.hosts().size());
    for (std::size_t h = 0; h < built.hosts().size(); ++h) {
      const NodeSpec& a = built.hosts()[h];
      const NodeSpec& b = parsed.hosts()[h];
      CHECK(a.name == b.name);
      CHECK(a.gpu == b.gpu);
      CHECK(a.gpus == b.gpus);
      CHECK(a.cpu_cores == b.cpu_cores);
      CHECK(a.core_sharing == b.core_sharing);
    }
    CHECK(built.switches() == parsed.switches());
    REQUIRE(built.links().size() == parsed.links().size());
    for (LinkId l = 0; l < built.links().size(); ++l) {
      CHECK(built.link_source(l) == parsed.link_source(l));
      CHECK(built.link_target(l) == parsed.link_target(l));
      // Bit for bit: the sampler's clusters must not move when the document is skipped.
      CHECK(built.links()[l].bandwidth_gbps == parsed.links()[l].bandwidth_gbps);
      CHECK(built.links()[l].latency == parsed.links()[l].latency);
      CHECK(built.links()[l].loss_rate == parsed.links()[l].loss_rate);
    }
  }
}

}  // namespace dynamix
