// End to end: the built `dynamix simulate` writes reproducible, complete run directories, and
// bad input exits with status 2, one line on stderr and no output left behind.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "dynamix_config.h"
#include "sim/cluster/gpu_catalog.h"
#include "sim/training/workload.h"
#include "studies/provenance.h"
#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using namespace testing;
namespace fs = std::filesystem;

constexpr const char* kRunFiles[] = {"iterations.csv", "summary.json", "validation.csv"};

TEST_CASE("dynamix simulate twice with the same seed writes byte-identical files") {
  TempDirectory work;
  const std::string command = "simulate --iterations 50 --seed 7 --record iterations --out ";
  const Outcome first = dynamix(command + quoted(work / "a"));
  const Outcome second = dynamix(command + quoted(work / "b"));
  REQUIRE(first.status == 0);
  REQUIRE(second.status == 0);
  CHECK(first.stderr_text.empty());
  for (const std::string file : kRunFiles) {
    CAPTURE(file);
    CHECK(contents(work.path() / "a" / file) == contents(work.path() / "b" / file));
  }
}

TEST_CASE("A YAML file of millions of values is refused within 600 MB of address space") {
  TempDirectory work;
  std::string text =
      "name: big\ntopology: " + (kSourceDir / "topologies/quickstart.yaml").string() + "\nextra:\n";
  for (int i = 0; i < 2'500'000; ++i) text += "  - 1\n";  // 15 MB, under the 16 MiB input bound
  std::ofstream(work / "big.yaml") << text;
  // yaml-cpp's tree for this file takes over 1 GB; counting the values as they stream does not.
  const Outcome run = run_shell("ulimit -v 600000; " + quoted(DYNAMIX_BINARY) +
                                " simulate --iterations 1 --scenario " + quoted(work / "big.yaml") +
                                " --out " + quoted(work / "out"));
  CHECK(run.status == 2);
  CHECK(run.stderr_text.find("expected a document of at most 1000000 values") != std::string::npos);
}

TEST_CASE("dynamix simulate with a different seed writes different iterations") {
  TempDirectory work;
  const std::string command = "simulate --iterations 50 --record iterations ";
  REQUIRE(dynamix(command + "--seed 7 --out " + quoted(work / "a")).status == 0);
  REQUIRE(dynamix(command + "--seed 8 --out " + quoted(work / "b")).status == 0);
  CHECK(contents(work.path() / "a" / "iterations.csv") !=
        contents(work.path() / "b" / "iterations.csv"));
}

TEST_CASE("iterations.csv has the documented columns and one row per worker per iteration") {
  TempDirectory work;
  const std::string scenario = (kSourceDir / "scenarios" / "quickstart.yaml").string();
  REQUIRE(dynamix("simulate --scenario " + quoted(scenario) +
                  " --iterations 50 --record iterations --out " + quoted(work / "run"))
              .status == 0);
  const Csv csv = read_csv(work.path() / "run" / "iterations.csv");
  for (const std::string column :
       {"iteration", "worker", "gpu_type", "batch_size", "compute_s", "comm_s", "wait_s",
        "iteration_s", "bytes_sent", "retransmits", "throughput_gbps", "cpu_time_ratio",
        "memory_util", "epoch", "train_loss", "train_accuracy", "grad_std_norm", "grad_var_norm"}) {
    CAPTURE(column);
    CHECK(std::count(csv.header.begin(), csv.header.end(), column) == 1);
  }
  const std::size_t workers = 8;
  CHECK(csv.rows.size() == 50 * workers);
  std::set<std::pair<int, int>> seen;
  const std::size_t iteration = csv.column("iteration");
  const std::size_t worker = csv.column("worker");
  const std::size_t gpu = csv.column("gpu_type");
  const std::size_t batch = csv.column("batch_size");
  for (const auto& row : csv.rows) {
    seen.emplace(std::stoi(row[iteration]), std::stoi(row[worker]));
    CHECK((row[gpu] == "A100" || row[gpu] == "V100"));
    CHECK(row[batch] == "128");
    CHECK(std::stod(row[csv.column("iteration_s")]) > 0);
    CHECK(std::stod(row[csv.column("bytes_sent")]) > 0);
  }
  CHECK(seen.size() == 50 * workers);
  CHECK(seen.begin()->first == 0);
  CHECK(seen.rbegin()->first == 49);
  CHECK(seen.rbegin()->second == static_cast<int>(workers - 1));

  const Csv validation = read_csv(work.path() / "run" / "validation.csv");
  CHECK(validation.header ==
        std::vector<std::string>{"epoch", "iteration", "time_s", "validation_accuracy"});
  // 50 iterations of 8 × 128 samples pass one CIFAR-10 epoch of 50,000.
  CHECK(validation.rows.size() == 1);
}

TEST_CASE("summary.json holds the run's totals, accuracies and resolved configuration") {
  TempDirectory work;
  REQUIRE(dynamix("simulate --iterations 50 --seed 9 --out " + quoted(work / "run")).status == 0);
  const YAML::Node summary = YAML::LoadFile(work / "run/summary.json");
  REQUIRE(summary.IsMap());
  for (const std::string key : {"total_time_s", "iterations", "seed", "final_accuracy",
                                "target_accuracy", "time_to_target_s", "epochs", "config"}) {
    CAPTURE(key);
    CHECK(summary[key].IsDefined());
  }
  CHECK(summary["total_time_s"].as<double>() > 0);
  CHECK(summary["iterations"].as<int>() == 50);
  CHECK(summary["seed"].as<int>() == 9);
  CHECK(summary["epochs"].as<double>() == doctest::Approx(50.0 * 1024 / 50000));
  CHECK(summary["target_accuracy"].as<double>() == doctest::Approx(0.9));
  const double final_accuracy = summary["final_accuracy"].as<double>();
  CHECK(final_accuracy > 0);
  CHECK(final_accuracy < 1);
  CHECK(summary["time_to_target_s"].IsNull());
  CHECK(summary["config"].IsMap());
  CHECK(summary["config"]["topology"]["nodes"].IsSequence());
}

/// What a rejected command must do: status 2, one line naming `names`, no output anywhere.
void check_rejected(const std::string& arguments_before_out, const std::string& names) {
  TempDirectory work;
  const std::string out = work / "run";
  const Outcome outcome = dynamix(arguments_before_out + " --out " + quoted(out));
  CAPTURE(outcome.stderr_text);
  CHECK(outcome.status == 2);
  CHECK(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n') == 1);
  CHECK(outcome.stderr_text.ends_with("\n"));
  CHECK(outcome.stderr_text.starts_with("dynamix: "));
  CHECK(outcome.stderr_text.find(names) != std::string::npos);
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(work.path())) {
    left.push_back(entry.path().filename().string());
  }
  CAPTURE(left.size());
  CHECK(left.empty());
}

TEST_CASE("bad input exits with status 2, one line naming the option or file, and no output") {
  SUBCASE("an unknown option") { check_rejected("simulate --iterations 5 --bogus 1", "bogus"); }
  SUBCASE("a bad --set path") {
    check_rejected("simulate --iterations 5 --set sync.nosuch.x=1", "--set: sync.nosuch");
  }
  SUBCASE("a --set without a value") { check_rejected("simulate --set batch_size", "--set"); }
  SUBCASE("a missing scenario file") {
    check_rejected("simulate --scenario /nonexistent/dynamix/missing.yaml",
                   "/nonexistent/dynamix/missing.yaml");
  }
  SUBCASE("an unknown command") { check_rejected("frobnicate", "'frobnicate'"); }
  SUBCASE("a zero batch size") { check_rejected("simulate --batch-size 0", "--batch-size"); }
  SUBCASE("a batch above a worker's memory limit") {
    check_rejected("simulate --batch-size 100000",
                   "on workers a100-0, a100-1, a100-2 and 1 more (A100 memory, resnet18-cifar10)");
  }
  SUBCASE("a batch above the memory of several worker groups lists each with its limit") {
    check_rejected("simulate --scenario hetero32 --batch-size 500",
                   "--batch-size: expected a batch of at most 356 on workers v100-0, v100-1, "
                   "v100-2 and 5 more (V100 memory, resnet50-cifar100); at most 356 on workers "
                   "t4-0, t4-1, t4-2 and 1 more (T4 memory, resnet50-cifar100), found 500");
  }
  SUBCASE("zero iterations") { check_rejected("simulate --iterations 0", "--iterations"); }
  SUBCASE("two batch options") {
    check_rejected("simulate --batch-size 64 --schedule 0:64",
                   "--batch-size/--batch-sizes/--schedule");
  }
  SUBCASE("a stray positional argument") {
    check_rejected("simulate extra", "the argument 'extra'");
  }
  SUBCASE("empty option values") {
    check_rejected("simulate --batch-sizes ''", "--batch-sizes");
    check_rejected("simulate --schedule ''", "--schedule");
    check_rejected("simulate --set batch_size=", "--set: batch_size");
  }
  SUBCASE("a negative seed") { check_rejected("simulate --seed -1", "--seed"); }
  SUBCASE("a zero decision interval") {
    check_rejected("simulate --policy goodput --decision-interval 0", "--decision-interval");
    check_rejected("evaluate --decision-interval 0", "--decision-interval");
  }
  SUBCASE("evaluate entries sharing a label, or a malformed label or schedule") {
    check_rejected("evaluate --policies static:64,static:64",
                   "--policies: expected a distinct label");
    check_rejected("evaluate --policies a=static:64,a=goodput", "'a' twice");
    check_rejected("evaluate --policies =static:64", "LABEL=POLICY");
    check_rejected("evaluate --policies schedule:64/10:32/5:128", "schedule:B/E:B");
    check_rejected("evaluate --initial-batch -1", "--initial-batch");
    check_rejected("oracle --seeds 0", "--seeds");
  }
  SUBCASE("more episodes than memory holds, refused before any is run") {
    check_rejected("evaluate --seeds 1000000000",
                   "--seeds: expected at most 1000000 episodes in all (each one's result is kept "
                   "in memory until the results are written), found 1 scenarios × 8 policies × "
                   "1000000000 seeds");
    check_rejected("evaluate --family 100000 --policies goodput --seeds 11",
                   "found 100000 scenarios × 1 policies × 11 seeds");
    check_rejected("evaluate --policies goodput --oracle --seeds 600000",
                   "found 1 scenarios × 2 policies × 600000 seeds");
    check_rejected("evaluate --policies goodput --oracle --seeds 200000",
                   "found 6 finalists × 200000 seeds");
    check_rejected("oracle --seeds 1000000000", "found 6 finalists × 1000000000 seeds");
  }
  SUBCASE("an unknown policy is blamed on the option that named it") {
    check_rejected("simulate --policy foo", "--policy: expected one of");
    check_rejected("simulate --policy ppo:", "--policy: expected ppo:PATH");
  }
  SUBCASE("more parameter servers than workers to colocate them with") {
    check_rejected("simulate --set sync.architecture=ps --set sync.servers=99", "sync.servers");
  }
  SUBCASE("a time conversion that would overflow int64 nanoseconds") {
    check_rejected("simulate --set sync.message_overhead_us=1e300", "sync.message_overhead_us");
  }
  SUBCASE("scenario values that do not fit their type, or keys given twice") {
    TempDirectory inputs;
    const std::string quickstart = (kSourceDir / "scenarios" / "quickstart.yaml").string();
    const std::string topology = (kSourceDir / "topologies" / "quickstart.yaml").string();
    const std::string header = "topology: " + topology + "\ntraining:\n  workload: " +
                               "resnet18-cifar10\n  budget_epochs: 1\n";
    check_rejected(
        "simulate --scenario " + inputs.write("big.yaml", header + "batch_size: 3000000000\n"),
        "big.yaml:5: batch_size: expected an integer in [1, 2147483647]");
    check_rejected(
        "simulate --scenario " + inputs.write("twice.yaml", header + "seed: 1\nseed: 2\n"),
        "twice.yaml:6: seed: expected each key once in a map, found 'seed' again");
  }
  SUBCASE("a scheduled batch that outgrows memory in the middle of the run") {
    // The run directory already exists in its temporary place when epoch 1 begins.
    check_rejected("simulate --iterations 120 --schedule 0:128,1:100000", "--schedule");
  }
}

TEST_CASE("a missing --out is rejected before anything runs") {
  const Outcome outcome = dynamix("simulate --iterations 5");
  CHECK(outcome.status == 2);
  CHECK(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n') == 1);
  CHECK(outcome.stderr_text.find("out") != std::string::npos);
}

TEST_CASE("a failed run leaves an earlier run directory at --out untouched") {
  TempDirectory work;
  const std::string out = work / "run";
  REQUIRE(dynamix("simulate --iterations 5 --record iterations --out " + quoted(out)).status == 0);
  const std::string before = contents(fs::path(out) / "iterations.csv");
  const Outcome failed =
      dynamix("simulate --iterations 120 --schedule 0:128,1:100000 --out " + quoted(out));
  CHECK(failed.status == 2);
  CHECK(contents(fs::path(out) / "iterations.csv") == before);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(work.path())) ++entries;
  CHECK(entries == 1);
}

TEST_CASE("--set topology=FILE picks another topology file, relative to the scenario") {
  TempDirectory work;
  const Outcome outcome =
      dynamix("simulate --iterations 3 --set topology=lossy8.yaml --out " + quoted(work / "run"));
  REQUIRE(outcome.status == 2);
  CHECK(outcome.stderr_text.find("embedded:/scenarios/lossy8.yaml") != std::string::npos);
  const Outcome picked =
      dynamix("simulate --iterations 3 --set topology=../topologies/lossy8.yaml --out " +
              quoted(work / "run"));
  CAPTURE(picked.stderr_text);
  REQUIRE(picked.status == 0);
  const YAML::Node summary = YAML::LoadFile(work / "run/summary.json");
  CHECK(summary["workers"].as<int>() == 8);
}

TEST_CASE("no command replaces a folder or file that dynamix did not write") {
  TempDirectory work;
  const fs::path mine = work.path() / "mine";
  fs::create_directories(mine);
  std::ofstream(mine / "notes.txt") << "precious";
  const std::string file = work.write("policy.pt", "not a policy");
  const std::string checkpoint = (kSourceDir / "tests" / "apps" / "reward_band.yaml").string();
  for (const std::string& command :
       {"simulate --iterations 3 --out " + quoted(mine.string()),
        "simulate --iterations 3 --out " + quoted(file),
        "evaluate --seeds 1 --policies static:64 --out " + quoted(mine.string()),
        "train --steps 64 --out " + quoted(mine.string()),
        "export --checkpoint " + quoted(checkpoint) + " --out " + quoted(mine.string()),
        "export --checkpoint " + quoted(checkpoint) + " --out " + quoted(file)}) {
    CAPTURE(command);
    const Outcome outcome = dynamix(command);
    CAPTURE(outcome.stderr_text);
    CHECK(outcome.status == 2);
    CHECK(outcome.stderr_text.find("--out") != std::string::npos);
  }
  // A failed export into a missing folder leaves no folder behind.
  const Outcome failed = dynamix("export --checkpoint " + quoted(checkpoint) + " --out " +
                                 quoted((work.path() / "made" / "deeper" / "policy.pt").string()));
  CHECK(failed.status == 2);
  CHECK_FALSE(fs::exists(work.path() / "made"));
  CHECK(contents(mine / "notes.txt") == "precious");
  CHECK(contents(file) == "not a policy");
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(work.path())) ++entries;
  CHECK(entries == 2);
}

TEST_CASE("--out naming the working directory or a parent of it is refused") {
  TempDirectory work;
  std::ofstream(work.path() / "notes.txt") << "precious";
  fs::create_directories(work.path() / "inside");
  for (const std::string out : {".", "..", "../inside/.."}) {
    CAPTURE(out);
    // Run inside the temporary directory, so that a regression can only empty that.
    const std::string command = "cd " + quoted(work / "inside") + " && " + quoted(DYNAMIX_BINARY) +
                                " simulate --iterations 3 --out " + out + " 2>/dev/null";
    const int raw = std::system(command.c_str());
    CHECK(WEXITSTATUS(raw) == 2);
  }
  CHECK(contents(work.path() / "notes.txt") == "precious");
  CHECK(fs::exists(work.path() / "inside"));
}

TEST_CASE("an interrupted simulate or evaluate exits 130 and leaves no staging folder") {
  TempDirectory work;
  const std::string scenario = (kSourceDir / "scenarios" / "hetero32.yaml").string();
  const std::string longer = " --set training.budget_time_s=30000 --set training.budget_epochs=1e5";
  for (const std::string& command :
       {"simulate --scenario " + quoted(scenario) + longer,
        "evaluate --seeds 50 --scenario " + quoted(scenario) + longer}) {
    CAPTURE(command);
    // SIGTERM once the staging folder exists (a background job of sh ignores SIGINT); the
    // runs take minutes, the wait for the folder at most 20 s.
    const std::string shell = quoted(DYNAMIX_BINARY) + " " + command + " --out " +
                              quoted(work / "run") + " >/dev/null 2>&1 & pid=$!; " +
                              "for i in $(seq 200); do [ -n \"$(ls -A " + quoted(work / "") +
                              ")\" ] && break; sleep 0.1; done; sleep 0.3; kill -TERM $pid; " +
                              "wait $pid";
    const int raw = std::system(shell.c_str());
    CHECK(WEXITSTATUS(raw) == 130);
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(work.path())) ++entries;
    CHECK(entries == 0);
  }
}

TEST_CASE("dynamix and dynamix-torch list the same commands, those that need LibTorch too") {
  const fs::path torch = fs::path(DYNAMIX_BINARY).parent_path() / "dynamix-torch";
  const Outcome listed = dynamix("--help");
  const Outcome listed_by_torch = run_shell(quoted(torch.string()) + " --help");
  CHECK(listed.status == 0);
  CHECK(listed_by_torch.status == 0);
  CHECK(listed.stdout_text == listed_by_torch.stdout_text);
  for (const std::string name : {"simulate", "train", "evaluate", "export", "version"}) {
    CHECK(listed.stdout_text.find("\n  " + name + " ") != std::string::npos);
  }
}

TEST_CASE(
    "dynamix --version and dynamix version print the version, the commit and the parts built") {
  const std::string meson = contents(kSourceDir / "meson.build");
  const std::size_t key = meson.find("version: '");
  REQUIRE(key != std::string::npos);
  const std::size_t start = key + std::string("version: '").size();
  const std::string version = meson.substr(start, meson.find('\'', start) - start);
  for (const std::string arguments : {"--version", "version"}) {
    CAPTURE(arguments);
    const Outcome outcome = dynamix(arguments);
    CHECK(outcome.status == 0);
    const std::vector<std::string> lines = split(outcome.stdout_text, '\n');
    REQUIRE(lines.size() >= 3);
    CHECK(lines[0] == "dynamix " + version);
    CHECK(lines[1] == "commit " + build_commit());
    std::string built = "built:";
    for (const auto& [name, is_built] : build_features()) {
      built += " " + name + (is_built ? "" : " (no)");
    }
    CHECK(lines[2] == built);
    CHECK(outcome.stderr_text.empty());
  }
}

TEST_CASE("dynamix scenarios --validation prints the validation clusters' paths, one per line") {
  const Outcome outcome = dynamix("scenarios --validation");
  REQUIRE(outcome.status == 0);
  CHECK(outcome.stdout_text.starts_with("embedded:/scenarios/validation/v4_extreme.yaml\n"));
  CHECK(std::count(outcome.stdout_text.begin(), outcome.stdout_text.end(), '\n') == 6);
}

TEST_CASE(
    "dynamix scenarios --dynamic prints the dynamic clusters, --validation their held-out set") {
  const Outcome training = dynamix("scenarios --dynamic");
  REQUIRE(training.status == 0);
  CHECK(training.stdout_text.starts_with("embedded:/scenarios/dynamic/d8_"));
  CHECK(std::count(training.stdout_text.begin(), training.stdout_text.end(), '\n') >= 6);
  CHECK(training.stdout_text.find("/validation/") == std::string::npos);
  const Outcome held_out = dynamix("scenarios --dynamic --validation");
  REQUIRE(held_out.status == 0);
  CHECK(held_out.stdout_text.starts_with(
      "embedded:/scenarios/dynamic/validation/v8_dyn_lossy.yaml\n"));
  CHECK(std::count(held_out.stdout_text.begin(), held_out.stdout_text.end(), '\n') >= 4);
}

TEST_CASE("dynamix scenarios lists every built-in scenario with its workers and workload") {
  const Outcome outcome = dynamix("scenarios");
  REQUIRE(outcome.status == 0);
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(outcome.stdout_text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> row;
    for (std::string word; words >> word;) row.push_back(word);
    rows.push_back(row);
  }
  REQUIRE(rows.size() > 1);
  CHECK(rows.front() == std::vector<std::string>{"name", "workers", "workload"});
  std::set<std::string> listed;
  for (std::size_t i = 1; i < rows.size(); ++i) listed.insert(rows[i].at(0));
  for (const auto& entry : fs::directory_iterator(kSourceDir / "scenarios")) {
    if (entry.path().extension() == ".yaml") CHECK(listed.count(entry.path().stem().string()) == 1);
  }
  CHECK(std::find(rows.begin(), rows.end(),
                  std::vector<std::string>{"hetero32", "32", "resnet50-cifar100"}) != rows.end());
  CHECK(std::find(rows.begin(), rows.end(),
                  std::vector<std::string>{"quickstart", "8", "resnet18-cifar10"}) != rows.end());
}

TEST_CASE("dynamix gpus lists every catalog GPU once, with its memory, as topologies name them") {
  const Outcome outcome = dynamix("gpus");
  REQUIRE(outcome.status == 0);
  CHECK(outcome.stderr_text.empty());
  std::istringstream lines(outcome.stdout_text);
  std::string line;
  REQUIRE(std::getline(lines, line));
  CHECK(line.starts_with("name"));
  std::vector<std::string> listed;
  const GpuCatalog catalog = GpuCatalog::builtin();
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, kind;
    double memory_gb = 0;
    words >> name >> kind >> memory_gb;
    REQUIRE(catalog.find(name) != nullptr);
    CHECK(memory_gb == doctest::Approx(catalog.find(name)->memory_gb).epsilon(0.01));
    listed.push_back(name);
  }
  CHECK(listed == catalog.names());
  // The reference the configuration gives for a node's device.
  CHECK(dynamix("config").stdout_text.find("dynamix gpus") != std::string::npos);
}

TEST_CASE("dynamix workloads lists every catalog workload once, with its model and dataset") {
  const Outcome outcome = dynamix("workloads");
  REQUIRE(outcome.status == 0);
  CHECK(outcome.stderr_text.empty());
  std::istringstream lines(outcome.stdout_text);
  std::string line;
  REQUIRE(std::getline(lines, line));
  CHECK(line.starts_with("name"));
  const WorkloadCatalog catalog = WorkloadCatalog::builtin();
  std::vector<std::string> listed;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::vector<std::string> row;
    for (std::string word; words >> word;) row.push_back(word);
    REQUIRE(row.size() == 7);
    CAPTURE(line);
    const Workload* workload = catalog.find(row[0]);
    REQUIRE(workload != nullptr);
    CHECK(row[1] == workload->model);
    CHECK(row[2] == workload->dataset);
    CHECK(std::stoll(row[5]) == static_cast<long long>(workload->dataset_size));
    listed.push_back(row[0]);
  }
  CHECK(listed.size() == catalog.all().size());
  CHECK(std::set<std::string>(listed.begin(), listed.end()).size() == listed.size());

  const Outcome stray = dynamix("workloads resnet18");
  CHECK(stray.status == 2);
  CHECK(stray.stderr_text.find("resnet18") != std::string::npos);
  CHECK(stray.stdout_text.empty());
}

TEST_CASE("--scenario takes a built-in scenario's short name in simulate and evaluate") {
  TempDirectory work;
  REQUIRE(
      dynamix("simulate --scenario hetero32 --iterations 5 --out " + quoted(work / "sim")).status ==
      0);
  const YAML::Node summary = YAML::LoadFile(work / "sim/summary.json");
  CHECK(summary["scenario"].as<std::string>() == "hetero32");
  CHECK(summary["workers"].as<int>() == 32);

  REQUIRE(dynamix("evaluate --scenario lossy8 --seeds 1 --policies static:64 --quiet --out " +
                  quoted(work / "eval"))
              .status == 0);
  const Csv results = read_csv(work.path() / "eval" / "results.csv");
  REQUIRE(results.rows.size() == 1);
  CHECK(results.rows[0][results.column("scenario")] == "lossy8");
}

TEST_CASE("an unknown scenario name exits 2 with one line listing the built-in names") {
  for (const std::string command : {"simulate", "evaluate", "train"}) {
    CAPTURE(command);
    check_rejected(command + " --scenario hetero33", "built-in scenario (background8, hetero32");
  }
}

TEST_CASE("simulate prints its summary to 4 significant digits; summary.json keeps them all") {
  TempDirectory work;
  const Outcome outcome = dynamix("simulate --iterations 50 --out " + quoted(work / "run"));
  REQUIRE(outcome.status == 0);
  const YAML::Node summary = YAML::LoadFile(work / "run/summary.json");
  const std::string exact = summary["total_time_s"].as<std::string>();
  const std::size_t at = outcome.stdout_text.find("total_time_s");
  REQUIRE(at != std::string::npos);
  std::istringstream line(outcome.stdout_text.substr(at + std::string("total_time_s").size()));
  std::string printed;
  line >> printed;
  CAPTURE(exact);
  CAPTURE(printed);
  std::size_t digits = 0;
  bool leading = true;
  for (const char c : printed) {
    if (c >= '1' && c <= '9') leading = false;
    if (std::isdigit(static_cast<unsigned char>(c)) && !leading) ++digits;
  }
  CHECK(digits <= 4);
  CHECK(exact.size() > printed.size());
  CHECK(std::stod(printed) == doctest::Approx(std::stod(exact)).epsilon(5e-4));
}

TEST_CASE("simulate warns when retransmission timeouts take most of the communication time") {
  TempDirectory work;
  const std::string trial = (kSourceDir / "scenarios/studies/trial_cluster.yaml").string();
  const Outcome lossy =
      dynamix("simulate --scenario " + trial + " --iterations 20 --out " + quoted(work / "lossy"));
  REQUIRE(lossy.status == 0);
  const double fraction =
      YAML::LoadFile(work / "lossy/summary.json")["rto_wait_fraction"].as<double>();
  CHECK(fraction > 0.5);
  CHECK(fraction <= 1);
  CHECK(lossy.stdout_text.find("  warning           retransmission timeouts take ") !=
        std::string::npos);
  // The same cluster without loss: no timeouts, no warning.
  const Outcome clean = dynamix("simulate --scenario " + trial +
                                " --set topology.fabric.groups.1.loss_rate=0 --iterations 20 "
                                "--out " +
                                quoted(work / "clean"));
  REQUIRE(clean.status == 0);
  CHECK(YAML::LoadFile(work / "clean/summary.json")["rto_wait_fraction"].as<double>() == 0);
  CHECK(clean.stdout_text.find("warning") == std::string::npos);
}

TEST_CASE("simulate warns when packet loss, not bandwidth, sets an iteration's pace") {
  // A researcher's two racks of T4s with 1% loss on the inter-rack link: timeouts take only a
  // quarter of the communication time, yet TCP's rate under loss makes iterations hundreds of
  // times as long as without the loss.
  TempDirectory work;
  std::ofstream(work / "racks.yaml") << R"(name: two-racks
topology:
  switches: [rack-1, rack-2]
  nodes:
    - {name: "a-{i}", count: 4, gpu: T4, cpu_cores: 16,
       link: {to: rack-1, bandwidth_gbps: 25, latency_us: 2}}
    - {name: "b-{i}", count: 4, gpu: T4, cpu_cores: 16,
       link: {to: rack-2, bandwidth_gbps: 25, latency_us: 2}}
  links:
    - {a: rack-1, b: rack-2, bandwidth_gbps: 25, latency_us: 2, loss_rate: 0.01}
training:
  workload: resnet18-cifar10
)";
  const std::string racks = quoted(work / "racks.yaml");
  const Outcome lossy =
      dynamix("simulate --scenario " + racks + " --iterations 5 --out " + quoted(work / "lossy"));
  REQUIRE(lossy.status == 0);
  const YAML::Node summary = YAML::LoadFile(work / "lossy/summary.json");
  CHECK(summary["rto_wait_fraction"].as<double>() < 0.5);
  CHECK(summary["loss_slowdown"].as<double>() > 100);
  CHECK(lossy.stdout_text.find("  warning           packet loss makes iterations ") !=
        std::string::npos);
  // Without the loss: a factor of 1 and no warning.
  const Outcome clean =
      dynamix("simulate --scenario " + racks +
              " --set topology.links.0.loss_rate=0 --iterations 5 --out " + quoted(work / "clean"));
  REQUIRE(clean.status == 0);
  CHECK(YAML::LoadFile(work / "clean/summary.json")["loss_slowdown"].as<double>() == 1);
  CHECK(clean.stdout_text.find("warning") == std::string::npos);
}

TEST_CASE("evaluate's progress in a file is plain lines ending in the last run; --quiet has none") {
  TempDirectory work;
  const std::string command = "evaluate --seeds 2 --policies static:64,static:128 ";
  const Outcome logged = dynamix(command + "--jobs 1 --out " + quoted(work / "a"));
  REQUIRE(logged.status == 0);
  CHECK(logged.stderr_text.find('\r') == std::string::npos);
  CHECK(logged.stderr_text.ends_with("[100%] 4/4 episodes\n"));
  // Policies run on two threads print the same bytes.
  const Outcome quiet = dynamix(command + "--jobs 2 --quiet --out " + quoted(work / "b"));
  REQUIRE(quiet.status == 0);
  CHECK(quiet.stderr_text.empty());
  CHECK(contents(work.path() / "a" / "results.csv") == contents(work.path() / "b" / "results.csv"));
}

TEST_CASE("evaluate labels its entries and reports a static batch memory cannot hold") {
  TempDirectory work;
  const Outcome run = dynamix(
      "evaluate --seeds 1 --quiet --set training.budget_epochs=2 --policies "
      "huge=static:100000,static:64,schedule:64/1:128 --out " +
      quoted(work / "e"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  const Csv results = read_csv(work.path() / "e" / "results.csv");
  REQUIRE(results.rows.size() == 3);
  const std::size_t policy = results.column("policy");
  CHECK(results.rows[0][policy] == "huge");
  CHECK(results.rows[0][results.column("feasible")] == "0");
  CHECK(results.rows[2][policy] == "schedule:64/1:128");
  CHECK(results.rows[2][results.column("kind")] == "schedule");
  CHECK(run.stdout_text.find("| huge | infeasible |") != std::string::npos);
}

TEST_CASE("evaluate --family N evaluates N samples of the scenario's training family") {
  TempDirectory work;
  const Outcome run =
      dynamix("evaluate --family 3 --seeds 1 --quiet --policies static:64,goodput:100 --out " +
              quoted(work / "e"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  const Csv results = read_csv(work.path() / "e" / "results.csv");
  REQUIRE(results.rows.size() == 6);
  std::set<std::string> scenarios;
  for (const auto& row : results.rows) scenarios.insert(row[results.column("scenario")]);
  CHECK(scenarios ==
        std::set<std::string>{"quickstart-sample-1", "quickstart-sample-2", "quickstart-sample-3"});
  // The samples are train --randomize's clusters, not the base's 8 workers: static:64's global
  // batch is 64 × their workers (5, 5 and 137).
  std::set<std::string> globals;
  for (const auto& row : results.rows) {
    if (row[results.column("policy")] == "static:64")
      globals.insert(row[results.column("min_global_batch")]);
  }
  CHECK(globals == std::set<std::string>{"320", "8768"});
  CHECK(contents(work.path() / "e" / "summary.md").find("## quickstart-sample-2") !=
        std::string::npos);
  const Outcome refused =
      dynamix("evaluate --family -1 --seeds 1 --out " + quoted(work / "refused"));
  CHECK(refused.status == 2);
  CHECK(refused.stderr_text.find("--family") != std::string::npos);
  CHECK_FALSE(fs::exists(work.path() / "refused"));
}

TEST_CASE("evaluate --family-budget makes every family sample reachable by its reference job") {
  TempDirectory work;
  const auto reached = [&](const std::string& budget) {
    const std::string out = quoted(work / ("b" + budget));
    const Outcome run = dynamix("evaluate --family 3 --family-budget " + budget +
                                " --seeds 1 --quiet --policies static:64 --out " + out);
    REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
    const Csv results = read_csv(work.path() / ("b" + budget) / "results.csv");
    std::size_t count = 0;
    for (const auto& row : results.rows) count += row[results.column("reached")] == "1";
    return count;
  };
  // 137 workers at 64 each cannot reach sample 3's workload target (ResNet-50 on CIFAR-100,
  // 73%) within 200 epochs; its reference lowers the target to 97% of what it reaches.
  CHECK(reached("0") == 2);
  CHECK(reached("2") == 3);
  const Outcome refused =
      dynamix("evaluate --family 2 --family-budget 101 --out " + quoted(work / "refused"));
  CHECK(refused.status == 2);
  CHECK(refused.stderr_text.find("--family-budget") != std::string::npos);
}

TEST_CASE("The oracle's best schedule runs in evaluate as written, and evaluate --oracle adds it") {
  TempDirectory work;
  const std::string easy =
      " --seeds 2 --quiet --set training.target_accuracy=0.6 --set training.budget_epochs=12";
  const Outcome search = dynamix("oracle" + easy + " --out " + quoted(work / "o"));
  REQUIRE_MESSAGE(search.status == 0, search.stderr_text);
  const Csv tried = read_csv(work.path() / "o" / "schedules.csv");
  CHECK(tried.rows.size() > 50);
  const std::string summary = contents(work.path() / "o" / "summary.md");
  const std::size_t at = summary.find("| quickstart | schedule:");
  REQUIRE(at != std::string::npos);
  const std::size_t start = summary.find("schedule:", at);
  const std::string best = summary.substr(start, summary.find(' ', start) - start);
  const Outcome evaluated = dynamix("evaluate --oracle --policies static:64,proportional," + best +
                                    easy + " --out " + quoted(work / "e"));
  REQUIRE_MESSAGE(evaluated.status == 0, evaluated.stderr_text);
  const Csv results = read_csv(work.path() / "e" / "results.csv");
  const std::size_t policy = results.column("policy");
  const std::size_t time = results.column("time_to_target_s");
  // The oracle row is the searched schedule: same episodes, same times.
  REQUIRE(results.rows.size() == 8);
  CHECK(results.rows[6][policy] == "oracle");
  CHECK(results.rows[6][results.column("kind")] == "oracle");
  CHECK(results.rows[6][time] == results.rows[4][time]);
  CHECK(results.rows[7][time] == results.rows[5][time]);
  CHECK(evaluated.stdout_text.find("| oracle | 2/2 |") != std::string::npos);
}

#ifdef DYNAMIX_MPI
TEST_CASE(
    "mpirun -n 2 dynamix evaluate writes the bytes of the single-process run, oracle included") {
  if (!have_mpirun()) {
    MESSAGE("skipped: no mpirun on PATH (Debian: apt-get install openmpi-bin)");
    return;
  }
  TempDirectory work;
  const std::string command =
      "evaluate --oracle --seeds 2 --quiet --jobs 1 --policies static:64,goodput,gns "
      "--scenario quickstart --scenario lossy8 --set training.target_accuracy=0.6 "
      "--set training.budget_epochs=12 --out ";
  const Outcome one = dynamix(command + quoted(work / "one"));
  REQUIRE_MESSAGE(one.status == 0, one.stderr_text);
  const Outcome spread = dynamix_over_mpi(command + quoted(work / "ranks"));
  REQUIRE_MESSAGE(spread.status == 0, spread.stderr_text);
  for (const char* file : {"results.csv", "summary.md"})
    CHECK(contents(work.path() / "one" / file) == contents(work.path() / "ranks" / file));
  CHECK(read_csv(work.path() / "ranks" / "results.csv").rows.size() == 16);
  // A bad input is said once, by rank 0, and nothing is written.
  const Outcome bad =
      dynamix_over_mpi("evaluate --scenario no-such-cluster --out " + quoted(work / "bad"));
  CHECK(bad.status != 0);
  CHECK(bad.stderr_text.find("no-such-cluster") != std::string::npos);
  CHECK_FALSE(fs::exists(work.path() / "bad"));
}
#else
TEST_CASE("dynamix evaluate built without MPI refuses to run as one of several MPI ranks") {
  MESSAGE("skipped the 2-rank mpirun evaluate: dynamix was built without MPI (-Dmpi)");
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  TempDirectory work;
  const Outcome outcome = dynamix("evaluate --out " + quoted(work / "e"));
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  CHECK(outcome.status == 2);
  CHECK(outcome.stderr_text.find("built without") != std::string::npos);
  CHECK(fs::is_empty(work.path()));
}
#endif

}  // namespace
}  // namespace dynamix
