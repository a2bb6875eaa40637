// ConfigNode: typed reads and error messages that name file, line and key.
#include "sim/io/config_node.h"

#include <doctest/doctest.h>

#include <string>

#include "sim/io/input_error.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;

constexpr const char* kLinks = R"(links:
  - a: n0
    b: s0
    bandwidth_gbps: 25
  - a: n1
    b: s0
    bandwidth_gbps: -5
    latency_us: 2
)";

TEST_CASE("ConfigNode reads typed values and checks bounds with the key path and line") {
  const ConfigNode root = ConfigNode::parse(kLinks, "topo.yaml");
  const auto links = root.at("links").items();
  REQUIRE(links.size() == 2);
  CHECK(links[0].positive("bandwidth_gbps") == 25);
  CHECK(links[0].positive_or("latency_us", 1.5) == 1.5);
  CHECK(error_of([&] { links[1].positive("bandwidth_gbps"); }) ==
        "topo.yaml:7: links.1.bandwidth_gbps: expected a number > 0, found '-5'");
  CHECK(error_of([&] { links[0].text("gpu"); }) ==
        "topo.yaml:2: links.0.gpu: expected a value for required key 'gpu', found none");
}

TEST_CASE("ConfigNode rejects unknown keys and wrong types") {
  const ConfigNode root = ConfigNode::parse("a: 1\nbandwith_gbps: 3\n", "x.yaml");
  CHECK(error_of([&] {
          root.reject_unknown({"a", "bandwidth_gbps"});
        }) ==
        "x.yaml:2: bandwith_gbps: expected one of the known keys (a, bandwidth_gbps), found "
        "unknown key 'bandwith_gbps'; did you mean 'bandwidth_gbps'?");
  const ConfigNode typed = ConfigNode::parse("n: ten\n", "x.yaml");
  CHECK(error_of([&] { typed.integer("n"); }) == "x.yaml:1: n: expected an integer, found 'ten'");
}

TEST_CASE("A --set path through a misspelt key suggests the closest key of that map") {
  ConfigNode root = ConfigNode::parse("sync:\n  servers: 1\ntraining: {}\n", "s.yaml");
  CHECK(error_of([&] { root.set("snyc.servers", "2", "--set"); }) ==
        "--set: snyc: expected an existing key in s.yaml, found no key 'snyc'; did you mean "
        "'sync'?");
  CHECK(error_of([&] { root.set("network.mss", "2", "--set"); }) ==
        "--set: network: expected an existing key in s.yaml, found no key 'network'");
}

TEST_CASE("ConfigNode refuses a second document and too many values before building a tree") {
  CHECK(error_of([] { ConfigNode::parse("a: 1\n---\nb: 2\n", "two.yaml"); }) ==
        "two.yaml:2: expected one YAML document in the file, found a second one");
  std::string list = "a:\n";
  for (std::size_t i = 0; i <= ConfigNode::kMaxValues; ++i) list += "- 1\n";
  CHECK(error_of([&] { ConfigNode::parse(list, "list.yaml"); }) ==
        "list.yaml:1000000: expected a document of at most 1000000 values, found more");
  // Map keys are not values: a map of kMaxValues / 2 entries and their keys is accepted.
  std::string map;
  for (std::size_t i = 0; i < ConfigNode::kMaxValues / 2; ++i) {
    map += 'k';  // appended piecewise: "k" + std::to_string(i) trips GCC 12's -Wrestrict
    map += std::to_string(i);
    map += ": 1\n";
  }
  CHECK(ConfigNode::parse(map, "map.yaml").keys().size() == ConfigNode::kMaxValues / 2);
}

TEST_CASE("Control characters in a key or value are escaped in the one-line message") {
  const ConfigNode root = ConfigNode::parse("\"a\\e[31m\\tb\": 1\nc: \"x\\ny\"\n", "keys.yaml");
  CHECK(error_of([&] { root.reject_unknown({"c"}); }) ==
        "keys.yaml:1: a\\x1b[31m\\tb: expected one of the known keys (c), found unknown key "
        "'a\\x1b[31m\\tb'");
  CHECK(error_of([&] { root.at("c").as_number(); }) ==
        "keys.yaml:2: c: expected a number, found 'x\\ny'");
}

TEST_CASE("ConfigNode reports YAML syntax errors with the line") {
  CHECK(
      error_of([] { ConfigNode::parse("a: [1, 2\nb: 3\n", "bad.yaml"); }).starts_with("bad.yaml:"));
}

TEST_CASE("ConfigNode set overrides values by dotted path and refuses bad paths") {
  ConfigNode root = ConfigNode::parse(kLinks, "topo.yaml");
  root.set("links.1.bandwidth_gbps", "40", "--set");
  CHECK(root.at("links").items()[1].positive("bandwidth_gbps") == 40);
  root.set("links.0.loss_rate", "0.01", "--set");
  CHECK(root.at("links").items()[0].fraction_or("loss_rate", 0) == doctest::Approx(0.01));
  CHECK(error_of([&] { root.set("links.7.bandwidth_gbps", "1", "--set"); }) ==
        "--set: links.7: expected an index below 2 in topo.yaml, found '7'");
  CHECK(error_of([&] { root.set("nodes.x", "1", "--set"); }) ==
        "--set: nodes: expected an existing key in topo.yaml, found no key 'nodes'");
}

}  // namespace
}  // namespace dynamix
