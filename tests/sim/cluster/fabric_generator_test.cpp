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
            .find("nodes: expected at most 65536 (the topology generated for them must fit one "
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

}  // namespace
}  // namespace dynamix
