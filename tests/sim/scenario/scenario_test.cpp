// Scenario loading: shipped and embedded scenarios, --set overrides, and errors that name the
// file (or --set), the key or line, and what was expected.
#include "sim/scenario/scenario.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "sim/cluster/gpu_catalog.h"
#include "sim/cluster/topology_knobs.h"
#include "sim/io/config_node.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"
#include "sim/scenario/scenario_knobs.h"
#include "sim/scenario/scenario_names.h"
#include "sim/training/dynamics.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::TempDirectory;

namespace fs = std::filesystem;

const fs::path kSourceDir = DYNAMIX_SOURCE_DIR;

// Line numbers below refer to these texts.
const std::string kTopology =
    "name: tiny\n"                                               // 1
    "switches:\n"                                                // 2
    "  - tor\n"                                                  // 3
    "nodes:\n"                                                   // 4
    "  - name: w-{i}\n"                                          // 5
    "    count: 2\n"                                             // 6
    "    gpu: A100\n"                                            // 7
    "    cpu_cores: 8\n"                                         // 8
    "    link: {to: tor, bandwidth_gbps: 25, latency_us: 2}\n";  // 9

const std::string kScenario =
    "name: tiny\n"                    // 1
    "topology: topology.yaml\n"       // 2
    "training:\n"                     // 3
    "  workload: resnet18-cifar10\n"  // 4
    "  optimizer: sgd\n"              // 5
    "  lr_rule: linear\n"             // 6
    "  target_accuracy: 0.9\n"        // 7
    "  budget_epochs: 5\n"            // 8
    "sync:\n"                         // 9
    "  architecture: ring\n"          // 10
    "batch_size: 64\n"                // 11
    "traces:\n"                       // 12
    "  - from: w-0\n"                 // 13
    "    to: tor\n"                   // 14
    "    file: trace.csv\n";          // 15

const std::string kTrace = "time_s,background_gbps\n0,1\n10,5\n20,0\n";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "'" << from << "' not in the test text");
  return text.replace(at, from.size(), to);
}

/// A scenario, its topology and its trace written side by side, each replaceable.
struct ScenarioFiles {
  std::string scenario = kScenario;
  std::string topology = kTopology;
  std::string trace = kTrace;

  TempDirectory directory;
  std::string scenario_path;
  std::string topology_path;
  std::string trace_path;

  void write() {
    scenario_path = directory.write("scenario.yaml", scenario);
    topology_path = directory.write("topology.yaml", topology);
    trace_path = directory.write("trace.csv", trace);
  }
  Scenario load(const std::vector<std::string>& overrides = {}) {
    write();
    return load_scenario(scenario_path, overrides);
  }
};

/// What an InputError must say: where it points and phrases its one line must contain.
struct ExpectedError {
  std::string source;
  /// 0: the error need not name a line; -1: it must name some line.
  int line = 0;
  std::string where;
  std::vector<std::string> phrases;
};

void check_rejected(ScenarioFiles& files, const ExpectedError& expected,
                    const std::vector<std::string>& overrides = {}) {
  files.write();
  std::optional<InputError> error;
  try {
    load_scenario(files.scenario_path, overrides);
  } catch (const InputError& caught) {
    error = caught;
  }
  REQUIRE_MESSAGE(error.has_value(), "the scenario loaded without an InputError");
  const std::string message = error->what();
  CAPTURE(message);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(error->source() == expected.source);
  CHECK(message.starts_with(expected.source));
  if (expected.line > 0) CHECK(error->line() == expected.line);
  if (expected.line < 0) CHECK(error->line() > 0);
  if (error->line() > 0) {
    CHECK(message.starts_with(expected.source + ":" + std::to_string(error->line())));
  }
  CHECK(error->where() == expected.where);
  if (!expected.where.empty()) CHECK(message.find(expected.where) != std::string::npos);
  CHECK(message.find("expected ") != std::string::npos);
  for (const std::string& phrase : expected.phrases) {
    CAPTURE(phrase);
    CHECK(message.find(phrase) != std::string::npos);
  }
}

TEST_CASE("No shipped scenario or topology holds a value --strict would refuse") {
  Diagnostics strict({.strict = true});
  std::size_t loaded = 0;
  for (const auto& entry : fs::recursive_directory_iterator(kSourceDir / "scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    CAPTURE(entry.path());
    // Some files are parts of studies (grids, bands) and fail for other reasons: only a
    // plausibility refusal counts here.
    try {
      load_scenario(entry.path().string(), {}, strict);
      ++loaded;
    } catch (const InputError& error) {
      CHECK(std::string(error.what()).find("(--strict)") == std::string::npos);
    }
  }
  CHECK(loaded >= 5);
}

TEST_CASE("Unit slips in intra_node_gbps and a user device warn with the value meant") {
  Diagnostics diagnostics;
  load_scenario((kSourceDir / "scenarios" / "quickstart.yaml").string(),
                {"sync.intra_node_gbps=200e9"}, diagnostics);
  const std::vector<std::string> after = diagnostics.warnings();
  REQUIRE(after.size() == 1);
  CHECK(after.back().find("sync.intra_node_gbps 200000000000 is above any NVLink we know "
                          "(\u2264 14400 Gb/s); did you mean 200?") != std::string::npos);
  CHECK(after.back().starts_with("--set sync.intra_node_gbps=200e9: "));

  const ConfigNode devices = ConfigNode::parse(
      "l4x: {memory_gb: 24e9, peak_tflops: 121e12, max_efficiency: 0.5, "
      "half_efficiency_batch: 8, fixed_overhead_ms: 1, source: spec sheet}\n",
      "devices.yaml");
  GpuCatalog::check_devices(devices, diagnostics);
  const std::vector<std::string> warned = diagnostics.warnings();
  REQUIRE(warned.size() == 3);
  CHECK(
      warned[1].ends_with("l4x.peak_tflops 1.21e+14 is above any accelerator "
                          "we know (\u2264 5000 TFLOPS); did you mean 121?"));
  CHECK(
      warned[2].ends_with("l4x.memory_gb 24000000000 is above any GPU's memory we "
                          "know (\u2264 288 GB); did you mean 24?"));
}

/// Values just outside a range the reference states ("a number in (0, 1]", "an integer >= 1");
/// none for other kinds of range.
std::vector<std::string> outside(const std::string& range) {
  std::smatch m;
  static const std::regex interval(
      R"(an? (number|integer) in ([\[(])([-\d.e+]+), ([-\d.e+]+)([\])]).*)");
  static const std::regex bound(R"(an? (number|integer) (>=?) ([-\d.e+]+).*)");
  const auto below = [](const std::string& kind, const std::string& open, const std::string& low) {
    if (open == "(" || open == ">") return low;
    return kind == "integer" ? std::to_string(std::stoll(low) - 1)
                             : std::to_string(std::stod(low) - 0.5);
  };
  if (std::regex_match(range, m, interval)) {
    const std::string above = m[5] == ")"         ? m[4].str()
                              : m[1] == "integer" ? std::to_string(std::stoll(m[4]) + 1)
                                                  : std::to_string(2 * std::stod(m[4]) + 1);
    return {below(m[1], m[2], m[3]), above};
  }
  if (std::regex_match(range, m, bound)) return {below(m[1], m[2], m[3])};
  return {};
}

TEST_CASE("A value outside its range is refused in the words the reference states") {
  // The reference (dynamix config, docs/configuration.md) and the readers' messages say one
  // range: every scenario and topology key with a numeric range, given a value just outside it.
  TempDirectory work;
  std::ofstream(work / "groups.yaml")
      << "name: groups\ntopology:\n  fabric:\n    kind: leaf-spine\n    nodes: 8\n"
         "    groups:\n      - {gpu: A100, nodes: 4}\n      - {gpu: V100, share: 1}\n"
         "training:\n  workload: resnet18-cifar10\n";
  const auto scenario_for = [&work](const std::string& key) {
    if (key.starts_with("topology.fabric.groups")) return work / "groups.yaml";
    if (key.starts_with("topology.fabric")) {
      return (kSourceDir / "scenarios/studies/scaling.yaml").string();
    }
    if (key.starts_with("topology.")) return (kSourceDir / "scenarios/hetero32.yaml").string();
    return (kSourceDir / "scenarios/quickstart.yaml").string();
  };
  int checked = 0;
  const auto check = [&](const std::string& section, const std::string& row_key,
                         const std::string& range) {
    std::string key =
        section.empty() || row_key.starts_with(section + ".") ? row_key : section + "." + row_key;
    for (auto at = key.find("[]"); at != std::string::npos; at = key.find("[]")) {
      key.replace(at, 2, ".0");
    }
    // groups.yaml's group 0 is sized by nodes, group 1 by share.
    if (key == "topology.fabric.groups.0.share") key = "topology.fabric.groups.1.share";
    for (const std::string& value : outside(range)) {
      CAPTURE(key);
      CAPTURE(value);
      std::string message;
      std::string assignment = key;
      assignment += "=";
      assignment += value;
      try {
        load_scenario(scenario_for(key), {assignment});
      } catch (const InputError& error) {
        message = error.what();
      }
      CHECK_MESSAGE(message.find("expected " + range) != std::string::npos, message);
      ++checked;
    }
  };
  for (const auto& table : scenario_knobs()) {
    for (const auto& knob : table.knobs) check(table.section, knob.key, knob.range);
  }
  for (const auto& table : topology_knobs()) {
    for (const auto& knob : table.knobs) check(table.section, knob.key, knob.range);
  }
  CHECK(checked > 80);
}

TEST_CASE("every shipped scenario loads") {
  std::vector<fs::path> scenarios;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "scenarios")) {
    if (entry.path().extension() == ".yaml") scenarios.push_back(entry.path());
  }
  REQUIRE(scenarios.size() >= 5);
  for (const fs::path& path : scenarios) {
    CAPTURE(path);
    const Scenario scenario = load_scenario(path.string());
    CHECK(scenario.name == path.stem().string());
    CHECK(scenario.source == path.string());
    CHECK_FALSE(scenario.worker_hosts.empty());
    CHECK(scenario.batch_size >= 1);
    CHECK(scenario.cost.parameters > 0);
    CHECK(scenario.workload.name == scenario.resolved.text("training.workload"));
    CHECK(scenario.workload.dataset_size > 0);
    CHECK(scenario.training.target_accuracy > 0);
    CHECK(scenario.training.target_accuracy < 1);
    if (scenario.sync.architecture == SyncArchitecture::kParameterServer) {
      CHECK_FALSE(scenario.server_hosts.empty());
    }
    for (const TraceAttachment& attachment : scenario.traces) {
      CHECK_FALSE(attachment.trace.steps.empty());
      CHECK(attachment.link < scenario.topology.links().size());
    }
    // The copy compiled into the binary is the same scenario.
    const Scenario embedded =
        load_scenario(std::string(kEmbeddedPrefix) + "scenarios/" + path.filename().string());
    CHECK(embedded.name == scenario.name);
    CHECK(embedded.worker_hosts == scenario.worker_hosts);
    CHECK(embedded.topology.links().size() == scenario.topology.links().size());
  }
}

TEST_CASE(
    "Every dynamic scenario loads with preemptions, stragglers that ramp up, co-located jobs or a "
    "mix") {
  const std::vector<std::string> training = dynamic_scenario_paths();
  const std::vector<std::string> held_out = dynamic_validation_scenario_paths();
  CHECK(training.size() >= 6);
  CHECK(held_out.size() >= 4);
  std::vector<std::string> all = training;
  all.insert(all.end(), held_out.begin(), held_out.end());
  for (const std::string& path : all) {
    CAPTURE(path);
    const Scenario scenario = load_scenario(path);
    CHECK(scenario.worker_hosts.size() >= 8);
    CHECK(scenario.worker_hosts.size() <= 256);
    const VariabilityOptions& variability = scenario.variability;
    const bool precursors =
        variability.straggler_rate_per_hour > 0 && variability.straggler_onset_s > 0;
    CHECK((precursors || !scenario.colocated_jobs.empty() || scenario.preemption.enabled()));
    CHECK(scenario.training.budget_time_s.has_value());
    // The copy beside the sources is the same scenario.
    const std::string file = path.substr(kEmbeddedPrefix.size());
    CHECK(load_scenario((kSourceDir / file).string()).colocated_jobs.size() ==
          scenario.colocated_jobs.size());
  }
}

TEST_CASE("A named scenario set stands for its embedded paths; other names for none") {
  CHECK(scenario_set("dynamic") == dynamic_scenario_paths());
  CHECK(scenario_set("dynamic-validation") == dynamic_validation_scenario_paths());
  CHECK(scenario_set("validation") == validation_scenario_paths());
  CHECK(scenario_set("budget") == budget_scenario_paths());
  const std::vector<std::string> shipped = scenario_set("shipped").value();
  REQUIRE(shipped.size() == builtin_scenario_names().size());
  for (const std::string& name : builtin_scenario_names()) {
    CHECK(std::find(shipped.begin(), shipped.end(), builtin_scenario_path(name)) != shipped.end());
  }
  CHECK_FALSE(scenario_set("quickstart").has_value());
}

TEST_CASE("the embedded default scenario loads as the quick-start cluster") {
  const Scenario scenario = load_scenario(kDefaultScenario);
  CHECK(scenario.name == "quickstart");
  CHECK(scenario.worker_hosts.size() == 8);
  CHECK(scenario.sync.architecture == SyncArchitecture::kRing);
  CHECK(scenario.workload.name == "resnet18-cifar10");
  CHECK(scenario.batch_size == 128);
  CHECK(scenario.training.target_accuracy == doctest::Approx(0.9));
}

TEST_CASE("a scenario file references its topology and traces relative to itself") {
  ScenarioFiles files;
  const Scenario scenario = files.load();
  CHECK(scenario.name == "tiny");
  CHECK(scenario.worker_hosts.size() == 2);
  CHECK(scenario.batch_size == 64);
  CHECK(scenario.training.budget_epochs == 5);
  REQUIRE(scenario.traces.size() == 1);
  CHECK(scenario.traces[0].file == files.trace_path);
  CHECK(scenario.traces[0].link == scenario.topology.find_link("w-0", "tor"));
  CHECK(scenario.traces[0].trace.steps.size() == 3);
}

TEST_CASE("Co-located jobs load on a link or between two hosts, with their rates and periods") {
  ScenarioFiles files;
  files.scenario +=
      "colocated_jobs:\n"
      "  - {from: w-0, to: tor, rate_gbps: 10, mean_on_s: 20, mean_off_s: 40}\n"
      "  - {from: w-0, to: w-1, rate_gbps: 5, mean_on_s: 1, mean_off_s: 2}\n";
  const Scenario scenario = files.load();
  REQUIRE(scenario.colocated_jobs.size() == 2);
  const ColocatedJob& link = scenario.colocated_jobs[0];
  CHECK(link.route == Route{*scenario.topology.find_link("w-0", "tor")});
  CHECK(link.rate_gbps == 10);
  CHECK(link.mean_on_s == 20);
  CHECK(link.mean_off_s == 40);
  const ColocatedJob& hosts = scenario.colocated_jobs[1];
  CHECK(hosts.route == Route{*scenario.topology.find_link("w-0", "tor"),
                             *scenario.topology.find_link("tor", "w-1")});
  CHECK(load_scenario(kDefaultScenario).colocated_jobs.empty());
}

TEST_CASE("A co-located job with unknown endpoints or a zero rate is refused at its line") {
  ScenarioFiles unknown;
  unknown.scenario +=
      "colocated_jobs:\n"                                                          // 16
      "  - {from: w-0, to: w-9, rate_gbps: 10, mean_on_s: 20, mean_off_s: 40}\n";  // 17
  unknown.write();
  check_rejected(unknown,
                 {unknown.scenario_path, 17, "colocated_jobs.0", {"two different hosts", "w-9"}});
  ScenarioFiles zero;
  zero.scenario +=
      "colocated_jobs:\n"
      "  - {from: w-0, to: tor, rate_gbps: 0, mean_on_s: 20, mean_off_s: 40}\n";
  zero.write();
  check_rejected(zero, {zero.scenario_path, 17, "colocated_jobs.0.rate_gbps", {"0"}});
}

TEST_CASE("--set overrides reach the topology file the scenario references") {
  const std::string quickstart = (kSourceDir / "scenarios" / "quickstart.yaml").string();
  const Scenario plain = load_scenario(quickstart);
  const Scenario scenario = load_scenario(quickstart, {"topology.nodes.0.link.bandwidth_gbps=10"});
  const Topology& topology = scenario.topology;
  for (const std::string host : {"a100-0", "a100-3"}) {
    CAPTURE(host);
    CHECK(topology.links()[*topology.find_link(host, "tor")].bandwidth_gbps == 10);
    CHECK(topology.links()[*topology.find_link("tor", host)].bandwidth_gbps == 10);
  }
  CHECK(topology.links()[*topology.find_link("v100-0", "tor")].bandwidth_gbps == 25);
  CHECK(plain.topology.links()[*plain.topology.find_link("a100-0", "tor")].bandwidth_gbps == 25);
  // The resolved configuration records the override.
  CHECK(scenario.resolved.text("topology.nodes.0.link.bandwidth_gbps") == "10");
}

TEST_CASE("--set overrides reach the scenario itself") {
  const std::string quickstart = (kSourceDir / "scenarios" / "quickstart.yaml").string();
  const Scenario scenario = load_scenario(quickstart, {"sync.architecture=ps", "batch_size=32"});
  CHECK(scenario.sync.architecture == SyncArchitecture::kParameterServer);
  CHECK(scenario.batch_size == 32);
  // Without server hosts the one server is colocated on the first worker.
  REQUIRE(scenario.server_hosts.size() == 1);
  CHECK(scenario.server_hosts[0] == scenario.worker_hosts[0]);
  CHECK(scenario.resolved.text("sync.architecture") == "ps");

  const Scenario more = load_scenario(quickstart, {"sync.architecture=ps", "sync.servers=3"});
  CHECK(more.server_hosts.size() == 3);

  const Scenario with_new_key = load_scenario(quickstart, {"seed=7"});
  CHECK(with_new_key.seed == 7);
}

TEST_CASE("training's gradient-statistic noise overrides the workload's, the floor only with n") {
  const std::string quickstart = (kSourceDir / "scenarios" / "quickstart.yaml").string();
  const Scenario plain = load_scenario(quickstart);
  CHECK(plain.workload.statistics.gradient_statistic_noise == 0.05);
  CHECK_FALSE(plain.workload.statistics.gradient_statistic_noise_samples.has_value());
  const Scenario measured =
      load_scenario(quickstart, {"training.gradient_statistic_noise=2.84",
                                 "training.gradient_statistic_noise_samples=64",
                                 "training.gradient_statistic_noise_floor=1.44"});
  const StatisticalModel& statistics = measured.workload.statistics;
  CHECK(statistics.gradient_statistic_noise == 2.84);
  CHECK(statistics.gradient_statistic_noise_samples == 64);
  CHECK(statistics.gradient_statistic_noise_floor == 1.44);
  CHECK(gradient_statistic_noise_at(statistics, 256) ==
        doctest::Approx(std::sqrt(1.44 * 1.44 + 2.84 * 2.84 / 4)));
  CHECK_THROWS_WITH_AS(load_scenario(quickstart, {"training.gradient_statistic_noise_floor=1"}),
                       doctest::Contains("training.gradient_statistic_noise_floor: expected "
                                         "gradient_statistic_noise_samples beside it"),
                       InputError);
  CHECK_THROWS_WITH_AS(load_scenario(quickstart, {"training.gradient_statistic_noise=6"}),
                       doctest::Contains("expected a number in [0, 5]"), InputError);
}

TEST_CASE("a description that is not text is refused, naming the key") {
  const std::string quickstart = (kSourceDir / "scenarios" / "quickstart.yaml").string();
  try {
    load_scenario(quickstart, {"description=[a, list]"});
    FAIL("a list was accepted as the description");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()).find("description: expected a string, found a list") !=
          std::string::npos);
  }
  CHECK(load_scenario(quickstart, {"description=two words"}).resolved.text("description") ==
        "two words");
}

TEST_CASE("a YAML syntax error names the file and the line") {
  SUBCASE("in the scenario") {
    ScenarioFiles files;
    files.scenario = replaced(kScenario, "  optimizer: sgd\n", "  optimizer: [sgd\n");
    files.write();
    check_rejected(files, {files.scenario_path, -1, "", {"valid YAML"}});
  }
  SUBCASE("in the topology") {
    ScenarioFiles files;
    files.topology = replaced(kTopology, "    count: 2\n", "    count: 2\n  bad: {\n");
    files.write();
    check_rejected(files, {files.topology_path, -1, "", {"valid YAML"}});
  }
}

TEST_CASE("an unknown key names the file, line and key and lists the known ones") {
  SUBCASE("in the scenario") {
    ScenarioFiles files;
    files.scenario = kScenario + "batchsize: 64\n";
    files.write();
    check_rejected(
        files, {files.scenario_path, 16, "batchsize", {"unknown key 'batchsize'", "batch_size"}});
  }
  SUBCASE("in the training map") {
    ScenarioFiles files;
    files.scenario = replaced(kScenario, "  optimizer: sgd\n", "  optimiser: sgd\n");
    files.write();
    check_rejected(files,
                   {files.scenario_path, 5, "training.optimiser", {"unknown key 'optimiser'"}});
  }
  SUBCASE("in a topology link") {
    ScenarioFiles files;
    files.topology = replaced(kTopology, "latency_us: 2", "latency_ms: 2");
    files.write();
    check_rejected(
        files, {files.topology_path, 9, "nodes.0.link.latency_ms", {"unknown key 'latency_ms'"}});
  }
}

TEST_CASE("a missing required key names the file and the key") {
  SUBCASE("the workload") {
    ScenarioFiles files;
    files.scenario = replaced(kScenario, "  workload: resnet18-cifar10\n", "");
    files.write();
    check_rejected(files,
                   {files.scenario_path, -1, "training.workload", {"required key 'workload'"}});
  }
  SUBCASE("the training map") {
    ScenarioFiles files;
    files.scenario = replaced(kScenario,
                              "training:\n  workload: resnet18-cifar10\n  optimizer: sgd\n"
                              "  lr_rule: linear\n  target_accuracy: 0.9\n  budget_epochs: 5\n",
                              "");
    files.write();
    check_rejected(files, {files.scenario_path, 0, "training", {"required key 'training'"}});
  }
  SUBCASE("a link's bandwidth") {
    ScenarioFiles files;
    files.topology = replaced(kTopology, " bandwidth_gbps: 25,", "");
    files.write();
    check_rejected(files,
                   {files.topology_path, 9, "nodes.0.link.bandwidth_gbps", {"'bandwidth_gbps'"}});
  }
}

TEST_CASE("a value of the wrong type names the file, line and key") {
  SUBCASE("a word for the batch size") {
    ScenarioFiles files;
    files.scenario = replaced(kScenario, "batch_size: 64", "batch_size: lots");
    files.write();
    check_rejected(files, {files.scenario_path, 11, "batch_size", {"an integer", "lots"}});
  }
  SUBCASE("a word for the epoch budget") {
    ScenarioFiles files;
    files.scenario = replaced(kScenario, "budget_epochs: 5", "budget_epochs: many");
    files.write();
    check_rejected(files, {files.scenario_path, 8, "training.budget_epochs", {"a number", "many"}});
  }
  SUBCASE("a list for the node count") {
    ScenarioFiles files;
    files.topology = replaced(kTopology, "count: 2", "count: [2]");
    files.write();
    check_rejected(files, {files.topology_path, 6, "nodes.0.count", {"an integer"}});
  }
}

TEST_CASE("a zero or negative bandwidth is rejected with the file, line and key") {
  for (const std::string value : {"0", "-5"}) {
    CAPTURE(value);
    ScenarioFiles files;
    files.topology = replaced(kTopology, "bandwidth_gbps: 25", "bandwidth_gbps: " + value);
    files.write();
    check_rejected(files, {files.topology_path,
                           9,
                           "nodes.0.link.bandwidth_gbps",
                           {"a number in [0.001, 1e+06]", "found '" + value + "'"}});
  }
}

TEST_CASE("a loss rate outside [0, 1) is rejected with the file, line and key") {
  for (const std::string value : {"1", "1.5", "-0.1"}) {
    CAPTURE(value);
    ScenarioFiles files;
    files.topology =
        replaced(kTopology, "latency_us: 2}", "latency_us: 2, loss_rate: " + value + "}");
    files.write();
    check_rejected(files, {files.topology_path,
                           9,
                           "nodes.0.link.loss_rate",
                           {"a number in [0, 1)", "found '" + value + "'"}});
  }
}

TEST_CASE("an unknown GPU type is rejected, listing the catalog") {
  SUBCASE("in the topology file") {
    ScenarioFiles files;
    files.topology = replaced(kTopology, "gpu: A100", "gpu: Z100");
    files.write();
    check_rejected(files, {files.topology_path, 7, "nodes.0.gpu", {"Z100", "A100", "V100", "T4"}});
  }
  SUBCASE("through --set") {
    ScenarioFiles files;
    files.write();
    check_rejected(files, {"--set topology.nodes.0.gpu=Z100", 0, "nodes.0.gpu", {"Z100", "A100"}},
                   {"topology.nodes.0.gpu=Z100"});
  }
}

TEST_CASE("a disconnected topology is rejected, naming the unreachable vertex") {
  ScenarioFiles files;
  files.topology = replaced(kTopology, "  - tor\n", "  - tor\n  - tor2\n") +
                   "  - name: island\n"                                          // 11
                   "    gpu: V100\n"                                             // 12
                   "    cpu_cores: 8\n"                                          // 13
                   "    link: {to: tor2, bandwidth_gbps: 25, latency_us: 2}\n";  // 14
  files.write();
  check_rejected(files,
                 {files.topology_path, -1, "nodes.1", {"a connected topology", "unreachable"}});
}

TEST_CASE("an empty trace is rejected, naming the trace file") {
  SUBCASE("no header") {
    ScenarioFiles files;
    files.trace = "";
    files.write();
    check_rejected(files, {files.trace_path, 1, "", {"an empty file"}});
  }
  SUBCASE("a header without rows") {
    ScenarioFiles files;
    files.trace = "time_s,background_gbps\n";
    files.write();
    check_rejected(files, {files.trace_path, -1, "", {"at least one row"}});
  }
}

TEST_CASE("a trace whose times do not increase is rejected at the offending row") {
  ScenarioFiles files;
  files.trace = "time_s,background_gbps\n0,1\n10,2\n5,3\n";
  files.write();
  check_rejected(files,
                 {files.trace_path, 4, "time_s", {"a time after the previous row", "found 5"}});

  ScenarioFiles repeated;
  repeated.trace = "time_s,background_gbps\n0,1\n10,2\n10,3\n";
  repeated.write();
  check_rejected(repeated, {repeated.trace_path, 4, "time_s", {"a time after the previous row"}});
}

TEST_CASE("a bad --set path names --set, the key and the file it was looked up in") {
  SUBCASE("a key that does not exist below the scenario") {
    ScenarioFiles files;
    files.write();
    check_rejected(files, {"--set", 0, "sync.nosuch", {"an existing key", files.scenario_path}},
                   {"sync.nosuch.deep=1"});
  }
  SUBCASE("an index past the end of a topology list") {
    ScenarioFiles files;
    files.write();
    check_rejected(files, {"--set", 0, "nodes.5", {"an index below 1", files.topology_path}},
                   {"topology.nodes.5.gpu=T4"});
  }
  SUBCASE("descending into a scalar") {
    ScenarioFiles files;
    files.write();
    check_rejected(files, {"--set", 0, "batch_size.x", {"a map or list"}}, {"batch_size.x.y=1"});
  }
  SUBCASE("no equals sign") {
    ScenarioFiles files;
    files.write();
    check_rejected(files, {"--set", 0, "", {"KEY=VALUE", "'batch_size'"}}, {"batch_size"});
  }
  SUBCASE("a key the scenario does not know") {
    ScenarioFiles files;
    files.write();
    check_rejected(files,
                   {"--set batchsize=3",
                    0,
                    "batchsize",
                    {"unknown key 'batchsize'; did you mean 'batch_size'?"}},
                   {"batchsize=3"});
  }
}

TEST_CASE("an unknown workload, optimizer or LR rule is rejected, listing the choices") {
  SUBCASE("workload") {
    ScenarioFiles files;
    files.scenario = replaced(kScenario, "resnet18-cifar10", "resnet19-cifar10");
    files.write();
    check_rejected(files, {files.scenario_path,
                           4,
                           "training.workload",
                           {"unknown workload 'resnet19-cifar10'", "resnet18-cifar10"}});
  }
  SUBCASE("optimizer") {
    ScenarioFiles files;
    files.scenario = replaced(kScenario, "optimizer: sgd", "optimizer: lamb");
    files.write();
    check_rejected(
        files,
        {files.scenario_path, 5, "training.optimizer", {"unknown optimizer 'lamb'", "sgd, adam"}});
  }
  SUBCASE("LR rule") {
    ScenarioFiles files;
    files.scenario = replaced(kScenario, "lr_rule: linear", "lr_rule: cosine");
    files.write();
    check_rejected(
        files,
        {files.scenario_path, 6, "training.lr_rule", {"unknown LR rule 'cosine'", "adascale"}});
  }
}

TEST_CASE("a target accuracy outside (0, 1) is rejected") {
  for (const std::string value : {"0", "1", "1.5", "-0.2"}) {
    CAPTURE(value);
    ScenarioFiles files;
    files.scenario = replaced(kScenario, "target_accuracy: 0.9", "target_accuracy: " + value);
    files.write();
    check_rejected(files, {files.scenario_path,
                           7,
                           "training.target_accuracy",
                           {"a number in (0, 1)", "found '" + value + "'"}});
  }
}

ScenarioSpec two_workers() {
  ScenarioSpec spec;
  spec.source = "code";
  const GpuCatalog gpus = GpuCatalog::builtin();
  const GpuSpec& a100 = *gpus.find("A100");
  spec.topology = Topology::star({worker_node("w-0", a100), worker_node("w-1", a100)},
                                 {25, std::chrono::microseconds(2), 0});
  spec.workload = WorkloadCatalog::builtin().at("resnet18-cifar10");
  return spec;
}

TEST_CASE("a scenario built in code is checked like a file") {
  const auto rejected = [](ScenarioSpec spec) {
    return testing::error_of([&] { const Scenario scenario(std::move(spec)); });
  };
  CHECK(rejected(two_workers()) == "no error");
  ScenarioSpec small_mss = two_workers();
  small_mss.network.mss_bytes = 0;
  CHECK(rejected(small_mss) == "code: network.mss_bytes: expected a number > 0, found 0");
  ScenarioSpec no_workload = two_workers();
  no_workload.workload = {};
  CHECK(rejected(no_workload) ==
        "code: training.workload: expected a workload of the catalog, found none");
  ScenarioSpec many_servers = two_workers();
  many_servers.sync.architecture = SyncArchitecture::kParameterServer;
  many_servers.sync.servers = 3;
  CHECK(rejected(many_servers).starts_with("code: sync.servers: expected at most 2"));
}

TEST_CASE("a scenario derived from another's spec keeps its values and places its servers") {
  ScenarioSpec spec = two_workers();
  spec.sync.architecture = SyncArchitecture::kParameterServer;
  const Scenario colocated(spec);
  REQUIRE(colocated.server_hosts.size() == 1);
  CHECK(colocated.server_hosts[0] == colocated.worker_hosts[0]);
  ScenarioSpec derived = colocated.spec();
  derived.sync.servers = 2;
  const Scenario both(std::move(derived));
  CHECK(both.server_hosts == both.worker_hosts);
  CHECK(both.workload.name == "resnet18-cifar10");
  CHECK(both.cost.optimizer_state_bytes_per_parameter == 4);
}

}  // namespace
}  // namespace dynamix
