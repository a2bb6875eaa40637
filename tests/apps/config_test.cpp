// `dynamix config`: every declared key listed, scenario values resolved, --set adding a section
// a scenario omits, and docs/configuration.md kept in step with the tables.
#include "apps/config.h"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "sim/cluster/gpu_catalog.h"
#include "sim/cluster/topology.h"
#include "sim/cluster/topology_knobs.h"
#include "sim/io/config_node.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_knobs.h"
#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using testing::contents;
using testing::dynamix;
using testing::kSourceDir;
using testing::quoted;
using testing::TempDirectory;

TEST_CASE("Every YAML block in docs/ and the README parses and loads as what it shows") {
  std::vector<std::filesystem::path> pages = {kSourceDir / "README.md"};
  for (const auto& entry : std::filesystem::directory_iterator(kSourceDir / "docs")) {
    if (entry.path().extension() == ".md") pages.push_back(entry.path());
  }
  const std::regex block("```yaml\n([\\s\\S]*?)```");
  const GpuCatalog gpus = GpuCatalog::builtin();
  int blocks = 0;
  TempDirectory work;
  for (const std::filesystem::path& page : pages) {
    const std::string text = contents(page);
    for (std::sregex_iterator it(text.begin(), text.end(), block), end; it != end; ++it) {
      const std::string yaml = (*it)[1].str();
      const std::string where = page.filename().string() + " block " + std::to_string(++blocks);
      CAPTURE(where);
      CAPTURE(yaml);
      ConfigNode root = ConfigNode::parse(yaml, where);
      if (root.has("training") || root.has("workload")) {
        // A whole scenario: loaded from a file beside none of the repository's topologies.
        const std::filesystem::path file =
            work.path() / ("block" + std::to_string(blocks) + ".yaml");
        std::ofstream(file) << yaml;
        CHECK_NOTHROW(load_scenario(file.string()));
      } else if (root.has("topology")) {
        CHECK_NOTHROW(Topology::load(root.at("topology"), gpus));
      } else {
        REQUIRE_MESSAGE((root.has("fabric") || root.has("nodes")),
                        "a YAML block that is neither a scenario nor a topology");
        CHECK_NOTHROW(Topology::load(root, gpus));
      }
    }
  }
  CHECK(blocks >= 4);
}

TEST_CASE("docs/configuration.md is what dynamix config --markdown prints") {
  std::ostringstream generated;
  print_configuration_markdown(generated);
  // On failure: dynamix config --markdown > docs/configuration.md
  CHECK(contents(kSourceDir / "docs" / "configuration.md") == generated.str());
}

TEST_CASE("dynamix config lists every declared key with its default and range") {
  const testing::Outcome outcome = dynamix("config");
  REQUIRE(outcome.status == 0);
  std::size_t keys = 0;
  for (const ScenarioKnobTable& table : scenario_knobs()) {
    for (const ScenarioKnob& knob : table.knobs) {
      CAPTURE(knob.key);
      CHECK(outcome.stdout_text.find("  " + knob.key + " = " + knob.default_value) !=
            std::string::npos);
      CHECK(!knob.meaning.empty());
      ++keys;
    }
  }
  CHECK(keys >= 30);
  CHECK(outcome.stdout_text.find("network.max_window_kb = 4096 KiB  (a number > 0)") !=
        std::string::npos);
  CHECK(outcome.stdout_text.find("network.min_available_fraction") != std::string::npos);
}

TEST_CASE("dynamix config --scenario shows the values a scenario resolves to") {
  const testing::Outcome outcome =
      dynamix("config --scenario quickstart --set network.mss_bytes=9000");
  REQUIRE(outcome.status == 0);
  CHECK(outcome.stdout_text.find("network.mss_bytes = 9000 bytes  (default 1460 bytes;") !=
        std::string::npos);
  CHECK(outcome.stdout_text.find("training.budget_time_s = 300 s") != std::string::npos);
  CHECK(outcome.stdout_text.find("name = quickstart") != std::string::npos);
}

TEST_CASE("dynamix config --scenario shows the devices and racks a scenario file declares") {
  // The two-rack example of docs/scenarios.md, with its own device.
  TempDirectory work;
  std::ifstream docs(testing::kSourceDir / "docs/scenarios.md");
  const std::string text{std::istreambuf_iterator<char>(docs), {}};
  const std::size_t start = text.find("```yaml\n") + 8;
  std::ofstream(work / "my-cluster.yaml") << text.substr(start, text.find("```", start) - start);
  const testing::Outcome outcome = dynamix("config --scenario " + quoted(work / "my-cluster.yaml"));
  REQUIRE_MESSAGE(outcome.status == 0, outcome.stderr_text);
  CHECK(outcome.stdout_text.find("devices = L40S  (default none;") != std::string::npos);
  const std::size_t resolved = outcome.stdout_text.find("the scenario as resolved");
  REQUIRE(resolved != std::string::npos);
  for (const char* part : {"rack-1", "rack-2", "l40s-{i}", "bandwidth_gbps: 40"}) {
    CAPTURE(part);
    CHECK(outcome.stdout_text.find(part, resolved) != std::string::npos);
  }
}

TEST_CASE("--set adds a section the scenario omits, and its errors name --set") {
  TempDirectory work;
  // quickstart has no network: or variability: section.
  const testing::Outcome outcome = dynamix(
      "simulate --iterations 5 --set network.incast=false --set variability.gpu_spread=0 "
      "--out " +
      quoted(work / "run"));
  REQUIRE_MESSAGE(outcome.status == 0, outcome.stderr_text);
  const YAML::Node config = YAML::LoadFile(work / "run/summary.json")["config"];
  CHECK(config["network"]["incast"].as<std::string>() == "false");
  CHECK(config["variability"]["gpu_spread"].as<double>() == 0);

  const testing::Outcome bad = dynamix("config --set network.min_rto_ms=0");
  CHECK(bad.status == 2);
  CHECK(bad.stderr_text ==
        "dynamix: --set network.min_rto_ms=0: network.min_rto_ms: expected a number in (0, "
        "1e+09], found '0'\n");
  const testing::Outcome unknown = dynamix("config --set network.nosuch.deep=1");
  CHECK(unknown.status == 2);
  CHECK(unknown.stderr_text.find("--set: network: expected an existing key") != std::string::npos);
}

TEST_CASE("dynamix config lists every topology key and says that nodes.N counts node groups") {
  const testing::Outcome outcome = dynamix("config");
  REQUIRE(outcome.status == 0);
  for (const TopologyKnobTable& table : topology_knobs()) {
    CHECK(outcome.stdout_text.find("\n" + table.section + ": ") != std::string::npos);
    for (const TopologyKnob& knob : table.knobs) {
      CAPTURE(knob.key);
      CHECK(outcome.stdout_text.find("  " + knob.key + " = " + knob.default_value) !=
            std::string::npos);
    }
  }
  CHECK(outcome.stdout_text.find(
            "topology.nodes.N is the N-th node GROUP (an entry of nodes:, with its count), not "
            "the N-th node") != std::string::npos);
  CHECK(outcome.stdout_text.find("topology.fabric.groups[].loss_rate = the fabric's  (a number "
                                 "in [0, 1); typical <= 0.01)") != std::string::npos);
  const std::string reference = contents(kSourceDir / "docs" / "configuration.md");
  CHECK(reference.find("## `topology.fabric.groups[]:`") != std::string::npos);
  CHECK(reference.find("groups:\n      - {gpu: A100, share: 0.25") != std::string::npos);
}

TEST_CASE("An implausible value warns once on stderr and --strict makes it exit 2") {
  TempDirectory work;
  const std::string slip =
      " --set topology.nodes.0.link.bandwidth_gbps=25000 --set topology.nodes.1.link.loss_rate=0.1";
  const testing::Outcome warned =
      dynamix("simulate --iterations 3" + slip + " --out " + quoted(work / "warned"));
  REQUIRE_MESSAGE(warned.status == 0, warned.stderr_text);
  CHECK(warned.stderr_text ==
        "dynamix: warning: --set topology.nodes.0.link.bandwidth_gbps=25000: "
        "nodes.0.link.bandwidth_gbps 25000 is above any NIC we know (\u2264 1600 Gb/s); did you "
        "mean 25?\n"
        "dynamix: warning: --set topology.nodes.1.link.loss_rate=0.1: nodes.1.link.loss_rate 0.1 "
        "is above any loss a training fabric runs with (\u2264 0.01, a fraction: 0.01 is 1%); did "
        "you mean 0.001?\n");
  const std::string grid = " --grid topology.nodes.0.link.bandwidth_gbps=25000,25";
  // A sweep loads the scenario once per cell: still one warning.
  const testing::Outcome swept =
      dynamix("sweep --seeds 1 --policies static:64" + grid + " --out " + quoted(work / "swept"));
  REQUIRE_MESSAGE(swept.status == 0, swept.stderr_text);
  CHECK(swept.stderr_text.find("dynamix: warning: ") ==
        swept.stderr_text.rfind("dynamix: warning: "));
  CHECK(swept.stderr_text.find("25000 is above any NIC we know") != std::string::npos);
  for (const std::string command : {"simulate", "evaluate", "sweep", "train"}) {
    CAPTURE(command);
    const testing::Outcome strict =
        dynamix(command + " --strict" + (command == "sweep" ? grid : slip) + " --out " +
                quoted(work / ("strict-" + command)));
    CHECK(strict.status == 2);
    CHECK(strict.stderr_text.find("expected a typical value (--strict), found 25000") !=
          std::string::npos);
    CHECK_FALSE(std::filesystem::exists(work.path() / ("strict-" + command)));
  }
}

}  // namespace
}  // namespace dynamix

namespace dynamix {
namespace {

TEST_CASE(
    "config --json lists every scenario key and every option table, and a scenario's values") {
  const testing::Outcome listed = testing::dynamix("config --json");
  REQUIRE(listed.status == 0);
  const YAML::Node all = YAML::Load(listed.stdout_text);
  std::size_t keys = 0;
  for (const ScenarioKnobTable& table : scenario_knobs()) keys += table.knobs.size();
  std::size_t found = 0;
  for (const YAML::Node& table : all["scenario"]) found += table["keys"].size();
  CHECK(found == keys);
  CHECK(all["topology"].size() == topology_knobs().size());
  std::vector<std::string> names;
  for (const YAML::Node& table : all["options"]) names.push_back(table["name"].as<std::string>());
  for (const char* name : {"env", "ppo", "train", "evaluate", "sweep", "serve", "config"}) {
    CAPTURE(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
  }
  CHECK_FALSE(all["resolved"]);

  const testing::Outcome resolved =
      testing::dynamix("config --json --scenario quickstart --set training.target_accuracy=0.8");
  REQUIRE(resolved.status == 0);
  const YAML::Node values = YAML::Load(resolved.stdout_text);
  bool target = false;
  for (const YAML::Node& table : values["scenario"]) {
    for (const YAML::Node& key : table["keys"]) {
      CHECK(key["value"]);
      if (key["key"].as<std::string>() == "training.target_accuracy") {
        target = key["value"].as<std::string>() == "0.8";
      }
    }
  }
  CHECK(target);
  CHECK(values["resolved"]["topology"]);
  CHECK(testing::dynamix("config --json --markdown").status == 2);
}

}  // namespace
}  // namespace dynamix
