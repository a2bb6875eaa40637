// Topology: shipped files, count expansion, routes, builders, and errors that name file and line.
#include "sim/cluster/topology.h"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/io/config_node.h"
#include "sim/io/input_error.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;

const GpuCatalog& catalog() {
  static const GpuCatalog gpus = GpuCatalog::builtin();
  return gpus;
}

Topology parse(const std::string& text) {
  return Topology::load(ConfigNode::parse(text, "t.yaml"), catalog());
}

std::string load_error(const std::string& text) {
  return error_of([&] { parse(text); });
}

std::vector<std::pair<std::size_t, std::size_t>> all_pairs(std::size_t hosts) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t a = 0; a < hosts; ++a) {
    for (std::size_t b = 0; b < hosts; ++b) pairs.emplace_back(a, b);
  }
  return pairs;
}

/// Checks that the route is a chain of links from `from` to `to`; returns its hop count.
std::size_t check_chain(const Topology& topology, std::size_t from, std::size_t to) {
  const Route& route = topology.route(from, to);
  if (from == to) {
    CHECK(route.empty());
    return 0;
  }
  REQUIRE(!route.empty());
  CHECK(topology.link_source(route.front()) == topology.hosts()[from].name);
  CHECK(topology.link_target(route.back()) == topology.hosts()[to].name);
  for (std::size_t i = 1; i < route.size(); ++i) {
    CHECK(topology.link_target(route[i - 1]) == topology.link_source(route[i]));
  }
  return route.size();
}

constexpr const char* kSmall = R"(name: small
switches:
  - tor
nodes:
  - name: a100-{i}
    count: 2
    gpu: A100
    cpu_cores: 8
    link: {to: tor, bandwidth_gbps: 25, latency_us: 2}
  - name: v100-0
    gpu: V100
    cpu_cores: 8
    link: {to: tor, bandwidth_gbps: 10, latency_us: 3, loss_rate: 0.001}
)";

TEST_CASE("Every shipped topology loads and connects every pair of hosts") {
  for (const char* name : {"quickstart", "hetero32", "ps16", "lossy8", "background8"}) {
    CAPTURE(name);
    Topology topology =
        Topology::load("embedded:/topologies/" + std::string(name) + ".yaml", catalog());
    CHECK(topology.name() == name);
    const auto pairs = all_pairs(topology.hosts().size());
    topology.precompute_routes(pairs);
    for (const auto& [from, to] : pairs) check_chain(topology, from, to);
  }
}

TEST_CASE("Shipped topologies have the GPUs, roles and links their comments promise") {
  const Topology quickstart = Topology::load("embedded:/topologies/quickstart.yaml", catalog());
  REQUIRE(quickstart.hosts().size() == 8);
  CHECK(quickstart.links().size() == 16);
  const Topology hetero = Topology::load("embedded:/topologies/hetero32.yaml", catalog());
  std::set<std::string> types;
  for (const NodeSpec& host : hetero.hosts()) types.insert(host.gpu);
  CHECK(hetero.hosts().size() == 32);
  CHECK(types.size() >= 3);
  CHECK(hetero.switches().size() == 6);
  const Topology ps = Topology::load("embedded:/topologies/ps16.yaml", catalog());
  CHECK(ps.workers().size() == 16);
  REQUIRE(ps.servers().size() == 2);
  CHECK(ps.hosts()[ps.servers()[0]].gpus == 0);
  CHECK(ps.hosts()[ps.servers()[0]].role == NodeRole::kServer);
  const Topology lossy = Topology::load("embedded:/topologies/lossy8.yaml", catalog());
  CHECK(lossy.links()[*lossy.find_link("tor", "v100-0")].loss_rate == doctest::Approx(1e-4));
  CHECK(lossy.links()[*lossy.find_link("tor", "a100-0")].loss_rate == 0);
  const Topology background = Topology::load("embedded:/topologies/background8.yaml", catalog());
  CHECK(background.find_link("tor-0", "tor-1").has_value());
}

TEST_CASE("Count expands a {i} template into numbered hosts in file order") {
  const Topology topology = parse(kSmall);
  REQUIRE(topology.hosts().size() == 3);
  CHECK(topology.hosts()[0].name == "a100-0");
  CHECK(topology.hosts()[1].name == "a100-1");
  CHECK(topology.hosts()[2].name == "v100-0");
  CHECK(topology.hosts()[1].gpu == "A100");
  CHECK(topology.hosts()[1].gpu_spec.peak_tflops == 312);
  CHECK(topology.hosts()[2].cpu_cores == 8);
  CHECK(topology.workers() == std::vector<std::size_t>{0, 1, 2});
  CHECK(topology.find_host("v100-0") == 2u);
  CHECK(!topology.find_host("tor").has_value());
}

TEST_CASE("Each YAML link gives two directed links with the link's bandwidth, latency and loss") {
  const Topology topology = parse(kSmall);
  const auto up = topology.find_link("v100-0", "tor");
  const auto down = topology.find_link("tor", "v100-0");
  REQUIRE(up.has_value());
  REQUIRE(down.has_value());
  CHECK(*up != *down);
  CHECK(topology.link_source(*up) == "v100-0");
  CHECK(topology.link_target(*up) == "tor");
  const LinkSpec& link = topology.links()[*down];
  CHECK(link.bandwidth_gbps == 10);
  CHECK(link.latency == std::chrono::microseconds(3));
  CHECK(link.loss_rate == doctest::Approx(0.001));
  CHECK(!topology.find_link("a100-0", "v100-0").has_value());
  CHECK(!topology.find_link("nowhere", "tor").has_value());
}

TEST_CASE("Routes in a leaf-spine file take the fewest hops and spread over both spines") {
  Topology topology = Topology::load("embedded:/topologies/hetero32.yaml", catalog());
  const auto pairs = all_pairs(topology.hosts().size());
  topology.precompute_routes(pairs);
  std::set<std::string> spines_used;
  for (const auto& [from, to] : pairs) {
    const std::size_t hops = check_chain(topology, from, to);
    if (from == to) continue;
    const std::string& from_leaf = topology.link_target(topology.route(from, to).front());
    const std::string& to_leaf = topology.link_source(topology.route(from, to).back());
    CHECK(hops == (from_leaf == to_leaf ? 2u : 4u));
    if (hops == 4) spines_used.insert(topology.link_target(topology.route(from, to)[1]));
  }
  CHECK(spines_used == std::set<std::string>{"spine-0", "spine-1"});
}

TEST_CASE("Routes are computed once and the same for the same pair") {
  Topology topology = parse(kSmall);
  const std::vector<std::pair<std::size_t, std::size_t>> pairs = {{0, 2}, {2, 0}, {0, 2}};
  CHECK(!topology.has_route(0, 2));
  topology.precompute_routes(pairs);
  CHECK(topology.has_route(0, 2));
  CHECK(topology.has_route(2, 0));
  CHECK(!topology.has_route(1, 2));
  const Route first = topology.route(0, 2);
  topology.precompute_routes(pairs);
  CHECK(topology.route(0, 2) == first);
  CHECK(first == Route{*topology.find_link("a100-0", "tor"), *topology.find_link("tor", "v100-0")});
}

TEST_CASE("Star and leaf-spine builders give 4096-host clusters with ring routes") {
  const GpuSpec& a100 = *catalog().find("A100");
  std::vector<NodeSpec> hosts;
  hosts.reserve(4096);
  for (int i = 0; i < 4096; ++i) hosts.push_back(worker_node(std::to_string(i) + "n", a100));
  std::vector<std::pair<std::size_t, std::size_t>> ring;
  ring.reserve(hosts.size());
  for (std::size_t i = 0; i < hosts.size(); ++i) ring.emplace_back(i, (i + 1) % hosts.size());

  Topology star = Topology::star(hosts, LinkSpec{25, std::chrono::microseconds(2), 0});
  star.precompute_routes(ring);
  CHECK(star.switches() == std::vector<std::string>{"switch"});
  CHECK(star.links().size() == 2 * 4096);
  for (const auto& [from, to] : ring) CHECK(check_chain(star, from, to) == 2);

  Topology fabric = Topology::leaf_spine(hosts, {.hosts_per_leaf = 32, .spines = 4});
  fabric.precompute_routes(ring);
  CHECK(fabric.switches().size() == 128 + 4);
  std::size_t cross_leaf = 0;
  for (const auto& [from, to] : ring) {
    const std::size_t hops = check_chain(fabric, from, to);
    CHECK((hops == 2 || hops == 4));
    cross_leaf += hops == 4 ? 1 : 0;
  }
  CHECK(cross_leaf == 128);
}

TEST_CASE("Servers need no GPU but workers do") {
  const Topology topology = parse(R"(nodes:
  - name: w
    gpu: T4
    cpu_cores: 4
  - name: ps
    role: server
    cpu_cores: 16
links:
  - {a: w, b: ps, bandwidth_gbps: 10, latency_us: 1}
)");
  CHECK(topology.workers() == std::vector<std::size_t>{0});
  CHECK(topology.servers() == std::vector<std::size_t>{1});
  CHECK(topology.hosts()[1].gpus == 0);
  CHECK(topology.hosts()[1].gpu.empty());
  CHECK(load_error("nodes:\n  - name: w\n    cpu_cores: 4\n") ==
        "t.yaml:2: nodes.0.gpu: expected a value for required key 'gpu', found none");
  CHECK(load_error("nodes:\n  - name: w\n    gpu: T4\n    cpu_cores: 4\n    role: boss\n") ==
        "t.yaml:5: nodes.0.role: expected worker or server, found 'boss'");
}

TEST_CASE("Topology errors name the file, line and key") {
  SUBCASE("unknown GPU type") {
    CHECK(load_error("nodes:\n  - name: n\n    gpu: B200\n    cpu_cores: 4\n") ==
          "t.yaml:3: nodes.0.gpu: expected a device in the catalog (V100, V100-32GB, A100, "
          "A100-80GB, H100, T4, RTX3090), found 'B200'");
    CHECK(load_error("nodes:\n  - name: n\n    gpu: RTX-3090\n    cpu_cores: 4\n") ==
          "t.yaml:3: nodes.0.gpu: expected a device in the catalog (V100, V100-32GB, A100, "
          "A100-80GB, H100, T4, RTX3090), found 'RTX-3090'; did you mean 'RTX3090'?");
  }
  SUBCASE("unknown node in a link") {
    CHECK(load_error(std::string(kSmall) +
                     "links:\n  - {a: tor, b: tor2, bandwidth_gbps: 10, latency_us: 1}\n") ==
          "t.yaml:15: links.0.b: expected the name of a node, switch or {i} group, found 'tor2'");
  }
  SUBCASE("a node linked to something that is not a switch") {
    CHECK(load_error("nodes:\n  - name: n\n    gpu: T4\n    cpu_cores: 4\n    link: {to: m, "
                     "bandwidth_gbps: 1, latency_us: 1}\n") ==
          "t.yaml:5: nodes.0.link.to: expected the name of a switch (), found 'm'");
  }
  SUBCASE("zero or negative bandwidth") {
    CHECK(load_error(std::string(kSmall) +
                     "links:\n  - {a: a100-0, b: v100-0, bandwidth_gbps: 0, latency_us: 1}\n") ==
          "t.yaml:15: links.0.bandwidth_gbps: expected a number in [0.001, 1e+06] Gb/s, found '0'");
    CHECK(
        load_error(std::string(kSmall) +
                   "links:\n  - {a: a100-0, b: v100-0, bandwidth_gbps: -5, latency_us: 1}\n") ==
        "t.yaml:15: links.0.bandwidth_gbps: expected a number in [0.001, 1e+06] Gb/s, found '-5'");
  }
  SUBCASE("negative latency") {
    CHECK(load_error(std::string(kSmall) +
                     "links:\n  - {a: a100-0, b: v100-0, bandwidth_gbps: 1, latency_us: -1}\n") ==
          "t.yaml:15: links.0.latency_us: expected a number in [0, 1e+06] us, found '-1'");
  }
  SUBCASE("bandwidth or latency that would overflow simulated time") {
    CHECK(
        load_error(std::string(kSmall) +
                   "links:\n  - {a: a100-0, b: v100-0, bandwidth_gbps: 1e-12, latency_us: 1}\n") ==
        "t.yaml:15: links.0.bandwidth_gbps: expected a number in [0.001, 1e+06] Gb/s, found "
        "'1e-12'");
    CHECK(
        load_error(std::string(kSmall) +
                   "links:\n  - {a: a100-0, b: v100-0, bandwidth_gbps: 1e300, latency_us: 1}\n") ==
        "t.yaml:15: links.0.bandwidth_gbps: expected a number in [0.001, 1e+06] Gb/s, found "
        "'1e300'");
    CHECK(
        load_error(std::string(kSmall) +
                   "links:\n  - {a: a100-0, b: v100-0, bandwidth_gbps: 1, latency_us: 1e300}\n") ==
        "t.yaml:15: links.0.latency_us: expected a number in [0, 1e+06] us, found '1e300'");
  }
  SUBCASE("loss outside [0, 1), a percent read as one") {
    for (const auto& entry :
         std::vector<std::pair<std::string, std::string>>{{"1", ", a fraction (1% is 0.01)"},
                                                          {"-0.1", ""},
                                                          {"10", ", a fraction (10% is 0.1)"},
                                                          {"250", ""}}) {
      const std::string& loss = entry.first;
      CAPTURE(loss);
      std::string document = kSmall;
      document +=
          "links:\n  - {a: a100-0, b: v100-0, bandwidth_gbps: 1, latency_us: 1, loss_rate: ";
      document += loss;
      document += "}\n";
      std::string expected = "t.yaml:15: links.0.loss_rate: expected a number in [0, 1)";
      expected += entry.second;
      expected += ", found '";
      expected += loss;
      expected += "'";
      CHECK(load_error(document) == expected);
    }
  }
  SUBCASE("a node count outside the range the reference states") {
    for (const char* count : {"0", "2000000"}) {
      CAPTURE(count);
      const std::string error =
          load_error(std::string("switches: [tor]\nnodes:\n  - {name: \"n-{i}\", count: ") + count +
                     ", gpu: A100, cpu_cores: 4, link: {to: tor, bandwidth_gbps: 10, "
                     "latency_us: 1}}\n");
      CHECK(error.find("nodes.0.count: expected an integer in [1, 1048576], found '" +
                       std::string(count) + "'") != std::string::npos);
    }
  }
  SUBCASE("disconnected topology") {
    CHECK(load_error(R"(switches: [tor, lonely]
nodes:
  - name: a-{i}
    count: 2
    gpu: A100
    cpu_cores: 8
    link: {to: tor, bandwidth_gbps: 25, latency_us: 2}
  - name: island
    gpu: V100
    cpu_cores: 8
    link: {to: lonely, bandwidth_gbps: 25, latency_us: 2}
)") == "t.yaml:8: nodes.1: expected a connected topology, found 'island' unreachable from 'a-0'");
  }
  SUBCASE("unknown key") {
    CHECK(
        load_error("nodes:\n  - name: n\n    gpu: T4\n    cpu_core: 4\n") ==
        "t.yaml:4: nodes.0.cpu_core: expected one of the known keys (name, count, role, gpu, "
        "gpus, cpu_cores, machine, link), found unknown key 'cpu_core'; did you mean 'cpu_cores'?");
    CHECK(load_error("hosts: []\n") ==
          "t.yaml:1: hosts: expected one of the known keys (name, switches, nodes, links), found "
          "unknown key 'hosts'");
  }
  SUBCASE("missing key") {
    CHECK(load_error("nodes:\n  - name: n\n    gpu: T4\n") ==
          "t.yaml:2: nodes.0.cpu_cores: expected a value for required key 'cpu_cores', found none");
    CHECK(load_error(std::string(kSmall) + "links:\n  - {a: a100-0, b: v100-0, latency_us: 1}\n") ==
          "t.yaml:15: links.0.bandwidth_gbps: expected a value for required key 'bandwidth_gbps', "
          "found none");
  }
  SUBCASE("wrong type") {
    CHECK(load_error("nodes:\n  - name: n\n    gpu: T4\n    cpu_cores: four\n") ==
          "t.yaml:4: nodes.0.cpu_cores: expected an integer, found 'four'");
    CHECK(load_error("nodes: 3\n") == "t.yaml:1: nodes: expected a list, found '3'");
  }
  SUBCASE("YAML syntax error") {
    CHECK(load_error("nodes:\n  - name: [n\n    gpu: T4\n").starts_with("t.yaml:"));
    CHECK(load_error("nodes:\n  - name: [n\n    gpu: T4\n").find("expected valid YAML") !=
          std::string::npos);
  }
  SUBCASE("duplicate names and links") {
    CHECK(load_error("switches: [n]\nnodes:\n  - name: n\n    gpu: T4\n    cpu_cores: 4\n") ==
          "t.yaml:3: nodes.0.name: expected a unique name, found 'n' (already defined at line 1)");
    CHECK(load_error(std::string(kSmall) +
                     "links:\n  - {a: tor, b: v100-0, bandwidth_gbps: 1, latency_us: 1}\n") ==
          "t.yaml:15: links.0: expected one link between 'tor' and 'v100-0', found a second one");
  }
  SUBCASE("count without a {i} template, and no nodes") {
    CHECK(load_error("nodes:\n  - name: n\n    count: 2\n    gpu: T4\n    cpu_cores: 4\n") ==
          "t.yaml:2: nodes.0.name: expected a name containing {i} when count is given, found 'n'");
    CHECK(load_error("nodes: []\n") == "t.yaml:1: nodes: expected at least one node, found a list");
  }
}

}  // namespace
}  // namespace dynamix
