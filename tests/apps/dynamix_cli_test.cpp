// End to end: the built `dynamix simulate` writes reproducible, complete run directories, and
// bad input exits with status 2, one line on stderr and no output left behind.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using namespace testing;
namespace fs = std::filesystem;

constexpr const char* kRunFiles[] = {"iterations.csv", "summary.json", "validation.csv"};

TEST_CASE("dynamix simulate twice with the same seed writes byte-identical files") {
  TempDirectory work;
  const Outcome first = dynamix("simulate --iterations 50 --seed 7 --out " + quoted(work / "a"));
  const Outcome second = dynamix("simulate --iterations 50 --seed 7 --out " + quoted(work / "b"));
  REQUIRE(first.status == 0);
  REQUIRE(second.status == 0);
  CHECK(first.stderr_text.empty());
  for (const std::string file : kRunFiles) {
    CAPTURE(file);
    CHECK(contents(work.path() / "a" / file) == contents(work.path() / "b" / file));
  }
}

TEST_CASE("dynamix simulate with a different seed writes different iterations") {
  TempDirectory work;
  REQUIRE(dynamix("simulate --iterations 50 --seed 7 --out " + quoted(work / "a")).status == 0);
  REQUIRE(dynamix("simulate --iterations 50 --seed 8 --out " + quoted(work / "b")).status == 0);
  CHECK(contents(work.path() / "a" / "iterations.csv") !=
        contents(work.path() / "b" / "iterations.csv"));
}

TEST_CASE("iterations.csv has the documented columns and one row per worker per iteration") {
  TempDirectory work;
  const std::string scenario = (kSourceDir / "scenarios" / "quickstart.yaml").string();
  REQUIRE(dynamix("simulate --scenario " + quoted(scenario) + " --iterations 50 --out " +
                  quoted(work / "run"))
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
                   "on worker a100-0 (A100 memory, resnet18-cifar10), found 100000");
  }
  SUBCASE("zero iterations") { check_rejected("simulate --iterations 0", "--iterations"); }
  SUBCASE("two batch options") {
    check_rejected("simulate --batch-size 64 --schedule 0:64",
                   "--batch-size/--batch-sizes/--schedule");
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
  REQUIRE(dynamix("simulate --iterations 5 --out " + quoted(out)).status == 0);
  const std::string before = contents(fs::path(out) / "iterations.csv");
  const Outcome failed =
      dynamix("simulate --iterations 120 --schedule 0:128,1:100000 --out " + quoted(out));
  CHECK(failed.status == 2);
  CHECK(contents(fs::path(out) / "iterations.csv") == before);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(work.path())) ++entries;
  CHECK(entries == 1);
}

}  // namespace
}  // namespace dynamix
