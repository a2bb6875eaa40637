// Topology knob rows: the readers accept exactly the declared keys, and the typical ranges warn
// about unit slips but never about the shipped topologies.
#include "sim/cluster/topology_knobs.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/cluster/fabric_generator.h"
#include "sim/cluster/topology.h"
#include "sim/io/config_node.h"
#include "sim/io/diagnostics.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;

const GpuCatalog& catalog() {
  static const GpuCatalog gpus = GpuCatalog::builtin();
  return gpus;
}

std::string load_error(const std::string& text, Diagnostics& diagnostics) {
  return error_of(
      [&] { Topology::load(ConfigNode::parse(text, "t.yaml"), catalog(), diagnostics); });
}

std::string load_error(const std::string& text) {
  Diagnostics diagnostics;
  return load_error(text, diagnostics);
}

/// "name, count, role": the list an unknown-key error gives.
std::string listed(const std::vector<std::string>& keys) {
  std::string list;
  for (const std::string& key : keys) list += (list.empty() ? "" : ", ") + key;
  return "one of the known keys (" + list + ")";
}

TEST_CASE("Each topology reader refuses an unknown key by listing exactly its table's keys") {
  const std::string node =
      "{name: n, gpu: A100, cpu_cores: 1, link: {to: s, bandwidth_gbps: 25, latency_us: 2";
  const std::vector<std::pair<std::string, std::string>> documents = {
      {"topology", "nosuch: 1\nnodes: [{name: n, gpu: A100}]\n"},
      {"topology.nodes[]", "nodes: [{name: n, gpu: A100, cpu_cores: 1, nosuch: 1}]\n"},
      {"topology.switches[]", "switches: [{name: s, nosuch: 1}]\nnodes: [" + node + "}}]\n"},
      {"topology.links[]", "switches: [s]\nnodes: [" + node +
                               "}}]\nlinks: [{a: n, b: s, bandwidth_gbps: 1, latency_us: 1, "
                               "nosuch: 1}]\n"},
      {"topology.fabric", "fabric: {kind: leaf-spine, nodes: 2, nosuch: 1}\n"},
      {"topology.fabric.groups[]",
       "fabric: {kind: leaf-spine, groups: [{gpu: A100, nodes: 2, "
       "nosuch: 1}]}\n"}};
  for (const auto& [section, document] : documents) {
    CAPTURE(section);
    std::vector<std::string> keys = accepted_keys(section);
    // A document with nodes cannot also have a fabric, so the explicit reader omits it.
    if (section == "topology") std::erase(keys, "fabric");
    CHECK(load_error(document).find(listed(keys)) != std::string::npos);
  }
  const std::string link_error = load_error("switches: [s]\nnodes: [" + node + ", nosuch: 1}}]\n");
  CHECK(link_error.find(listed(accepted_keys("topology.nodes[]", "link"))) != std::string::npos);
}

TEST_CASE("Every topology row is a key some reader accepts") {
  for (const TopologyKnobTable& table : topology_knobs()) {
    for (const TopologyKnob& knob : table.knobs) {
      CAPTURE(knob.key);
      CHECK(!knob.meaning.empty());
      CHECK(!knob.default_value.empty());
      const std::string key = knob.key.substr(table.section.size() + 1);
      const std::string top = key.substr(0, key.find('.'));
      const std::vector<std::string> keys = accepted_keys(table.section);
      CHECK(std::find(keys.begin(), keys.end(), top) != keys.end());
    }
  }
  CHECK(accepted_keys("topology.nodes[]") == std::vector<std::string>{"name", "count", "role",
                                                                      "gpu", "gpus", "cpu_cores",
                                                                      "machine", "link"});
  CHECK(accepted_keys("topology.nodes[]", "link") ==
        std::vector<std::string>{"to", "bandwidth_gbps", "latency_us", "loss_rate"});
}

TEST_CASE("A node uplink of 25000 Gb/s warns once, naming key, bound and the likely value") {
  const std::string text =
      "switches: [s]\nnodes: [{name: n, gpu: A100, cpu_cores: 1, link: {to: s, bandwidth_gbps: "
      "25000, "
      "latency_us: 2}}]\n";
  Diagnostics diagnostics;
  for (int load = 0; load < 3; ++load)
    Topology::load(ConfigNode::parse(text, "slip.yaml"), catalog(), diagnostics);
  const std::vector<std::string> after = diagnostics.warnings();
  REQUIRE(after.size() == 1);
  CHECK(after.back() ==
        "slip.yaml:2: nodes.0.link.bandwidth_gbps 25000 is above any NIC we know (\u2264 1600 "
        "Gb/s); did you mean 25?");
}

TEST_CASE("A fabric's lossy group warns about its loss_rate, but not the links it generates") {
  const std::string text =
      "fabric: {kind: leaf-spine, nodes: 64, hosts_per_leaf: 32, spines: 1, host_bandwidth_gbps: "
      "400,\n  groups: [{gpu: A100, share: 1, loss_rate: 0.1}]}\n";
  Diagnostics diagnostics;
  // The generated leaf-spine uplink carries 32 x 400 Gb/s: plausible, as a sum of NICs.
  Topology::load(ConfigNode::parse(text, "fabric.yaml"), catalog(), diagnostics);
  const std::vector<std::string> warnings = diagnostics.warnings();
  REQUIRE(warnings.size() == 1);
  CHECK(warnings.back().find("fabric.groups.0.loss_rate 0.1 is above any loss") !=
        std::string::npos);
  CHECK(warnings.back().find("did you mean 0.001?") != std::string::npos);
}

TEST_CASE("--strict refuses an implausible topology value with the warning's reason") {
  Diagnostics strict({.strict = true});
  const std::string error = load_error(
      "switches: [s]\nnodes: [{name: n, gpu: A100, cpu_cores: 1, link: {to: s, bandwidth_gbps: 25, "
      "latency_us: 2000}}]\n",
      strict);
  CHECK(error ==
        "t.yaml:2: nodes.0.link.latency_us: expected a typical value (--strict), found 2000 is "
        "above any latency inside a data center (\u2264 1000 us); did you mean 2?");
}

TEST_CASE("The shipped topologies hold no implausible value") {
  Diagnostics strict({.strict = true});
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(DYNAMIX_SOURCE_DIR) / "topologies")) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path());
    CHECK_NOTHROW(Topology::load(entry.path().string(), catalog(), strict));
  }
}

}  // namespace
}  // namespace dynamix
