// End to end: `dynamix sweep` runs the grid × policies × seeds, writes the same results.csv
// whatever --jobs, resumes without rerunning recorded episodes, and refuses bad input.
#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dynamix_config.h"
#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using namespace testing;
namespace fs = std::filesystem;

/// Two workloads × two synchronizations; gpt2-small cannot hold a static batch of 256.
const std::string kSweep =
    "sweep --grid training.workload=resnet18-cifar10,gpt2small-wikitext103 "
    "--grid sync.architecture=ring,ps --policies static:256,goodput --seeds 2 "
    "--set training.budget_time_s=8 --quiet";

TEST_CASE("dynamix sweep writes a row per cell, policy and seed with the grid values as columns") {
  TempDirectory work;
  const Outcome outcome = dynamix(kSweep + " --jobs 2 --out " + quoted(work / "sweep"));
  REQUIRE_MESSAGE(outcome.status == 0, outcome.stderr_text);
  const Csv results = read_csv(work.path() / "sweep" / "results.csv");
  REQUIRE(results.rows.size() == 4 * 2 * 2);
  CHECK(results.header[0] == "cell");
  CHECK(results.header[1] == "training.workload");
  CHECK(results.header[2] == "sync.architecture");
  const std::size_t status = results.column("status");
  for (std::size_t i = 0; i < results.rows.size(); ++i) {
    const auto& row = results.rows[i];
    CAPTURE(i);
    CHECK(row[0] == std::to_string(i / 4));
    CHECK(row[1] == (i < 8 ? "resnet18-cifar10" : "gpt2small-wikitext103"));
    CHECK(row[2] == (i / 4 % 2 == 0 ? "ring" : "ps"));
    CHECK(row[results.column("policy")] == (i / 2 % 2 == 0 ? "static:256" : "goodput"));
    CHECK(row[results.column("seed")] == std::to_string(1000 + i % 2));
    const bool infeasible = i >= 8 && i / 2 % 2 == 0;
    CHECK(row[status] == (infeasible ? "infeasible" : "ok"));
    if (!infeasible) {
      CHECK(std::stod(row[results.column("mean_iteration_s")]) > 0);
      CHECK(std::stod(row[results.column("comm_share")]) > 0);
      CHECK(std::stod(row[results.column("comm_share")]) < 1);
    }
  }
  CHECK(read_csv(work.path() / "sweep" / "timing.csv").rows.size() == 16);
  const std::string summary = contents(work.path() / "sweep" / "summary.md");
  CHECK(summary.find("| training.workload=gpt2small-wikitext103 sync.architecture=ps | "
                     "static:256 | infeasible |") != std::string::npos);
  CHECK(!fs::exists(work.path() / "sweep" / "episodes"));
}

TEST_CASE("dynamix sweep writes the same results.csv bytes with one job and with two") {
  TempDirectory work;
  REQUIRE(dynamix(kSweep + " --jobs 1 --out " + quoted(work / "one")).status == 0);
  REQUIRE(dynamix(kSweep + " --jobs 2 --out " + quoted(work / "two")).status == 0);
  CHECK(contents(work.path() / "one" / "results.csv") ==
        contents(work.path() / "two" / "results.csv"));
  CHECK(contents(work.path() / "one" / "summary.md") ==
        contents(work.path() / "two" / "summary.md"));
}

TEST_CASE("dynamix sweep --resume runs only the episodes that have no record") {
  TempDirectory work;
  const std::string out = work / "sweep";
  const Outcome first = dynamix(kSweep + " --jobs 2 --max-episodes 5 --out " + quoted(out));
  REQUIRE_MESSAGE(first.status == 0, first.stderr_text);
  CHECK(first.stderr_text.find("5 of 16 episodes recorded") != std::string::npos);
  CHECK(!fs::exists(out));
  std::vector<std::string> recorded;
  for (const auto& entry : fs::directory_iterator(out + ".partial/episodes"))
    recorded.push_back(contents(entry.path()));
  REQUIRE(recorded.size() == 5);

  REQUIRE(dynamix(kSweep + " --jobs 2 --resume --out " + quoted(out)).status == 0);
  REQUIRE(dynamix(kSweep + " --jobs 1 --out " + quoted(work / "fresh")).status == 0);
  CHECK(contents(fs::path(out) / "results.csv") == contents(work.path() / "fresh" / "results.csv"));
  // A rerun episode would have a new wall time: the five recorded ones kept theirs.
  const std::string timing = contents(fs::path(out) / "timing.csv");
  for (const std::string& record : recorded) {
    const std::string row = record.substr(record.find('\n') + 1);
    const std::string wall = row.substr(row.rfind(',') + 1);
    CAPTURE(record);
    CHECK(timing.find("," + wall) != std::string::npos);
  }
}

TEST_CASE("dynamix sweep --max-episodes shows progress against the whole sweep, then resumes it") {
  TempDirectory work;
  const std::string out = work / "sweep";
  std::string loud = kSweep;
  loud.erase(loud.find(" --quiet"));
  const Outcome first = dynamix(loud + " --jobs 1 --max-episodes 3 --out " + quoted(out));
  REQUIRE_MESSAGE(first.status == 0, first.stderr_text);
  CHECK(first.stderr_text.find("3/16 episodes") != std::string::npos);
  CHECK(first.stderr_text.find("16/16 episodes") == std::string::npos);
  CHECK(first.stderr_text.find("3 of 16 episodes recorded") != std::string::npos);
  // The resumed run counts the three already recorded.
  const Outcome second = dynamix(loud + " --jobs 1 --resume --max-episodes 2 --out " + quoted(out));
  REQUIRE_MESSAGE(second.status == 0, second.stderr_text);
  CHECK(second.stderr_text.find("5/16 episodes") != std::string::npos);
  CHECK(second.stderr_text.find("5 of 16 episodes recorded") != std::string::npos);
}

TEST_CASE("dynamix sweep --resume refuses a record that is not this sweep's, naming its line") {
  TempDirectory work;
  const std::string out = work / "sweep";
  REQUIRE(dynamix(kSweep + " --max-episodes 3 --out " + quoted(out)).status == 0);
  const fs::path record = out + ".partial/episodes/000001.csv";
  const std::string original = contents(record);
  const std::string header = original.substr(0, original.find('\n') + 1);
  const std::string row = original.substr(header.size());
  const auto tampered = [&](const std::string& from, const std::string& to) {
    const std::size_t at = row.find(from);
    REQUIRE(at != std::string::npos);
    return header + row.substr(0, at) + to + row.substr(at + from.size());
  };
  const std::string identity = "0,resnet18-cifar10,ring,static:256,1001,";
  REQUIRE(row.starts_with(identity));
  const std::string name = record.string() + ":2: ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {tampered(identity, "99,resnet18-cifar10,ring,bogus:1,999,"),
       name + "cell: expected '0' (episode 1 of this sweep), found '99'"},
      {tampered("static:256,1001", "bogus:1,1001"), name + "policy: expected 'static:256'"},
      {tampered("static:256,1001", "static:256,999"), name + "seed: expected '1001'"},
      {tampered("ring,", "ps,"), name + "sync.architecture: expected 'ring'"},
      {tampered(",ok,", ",fine,"), name + "status: expected ok or infeasible, found 'fine'"},
      {tampered(",ok,", ",infeasible,"), name + "reason: expected why the episode is infeasible"},
      {original + "0,x\n", name + "expected one row ending with a newline"},
      {"cell\n" + row, record.string() + ":1: expected the header of this sweep's records"},
  };
  for (const auto& tampered_case : cases) {
    const std::string& text = tampered_case.first;  // named: CAPTURE cannot take a binding
    const std::string& message = tampered_case.second;
    CAPTURE(text);
    std::ofstream(record, std::ios::binary) << text;
    const Outcome resumed = dynamix(kSweep + " --resume --out " + quoted(out));
    CHECK(resumed.status == 2);
    CHECK(resumed.stderr_text.starts_with("dynamix: " + message));
    CHECK(std::count(resumed.stderr_text.begin(), resumed.stderr_text.end(), '\n') == 1);
    CHECK(!fs::exists(out));
    CHECK(std::distance(fs::directory_iterator(out + ".partial/episodes"), {}) == 3);
  }
  std::ofstream(record, std::ios::binary) << original;
  CHECK(dynamix(kSweep + " --resume --out " + quoted(out)).status == 0);
}

TEST_CASE("dynamix sweep refuses a grid too large for memory in well under 2 s, running nothing") {
  std::string thousand;
  for (int i = 1; i <= 1000; ++i) {
    if (i > 1) thousand += ',';  // piecewise: const char* + std::string trips GCC 12's -Wrestrict
    thousand += std::to_string(i);
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--grid training.budget_epochs=" + thousand + " --grid batch_size=" + thousand +
           " --policies goodput --seeds 1",
       "--grid: expected a grid of at most 40329 cells (every cell's scenario is loaded before "
       "the first episode, about 52 KiB each, within 2048 MiB), found 1000000 cells"},
      {"--grid training.budget_epochs=" + thousand +
           " --grid batch_size=1,2,3,4,5,6,7,8,9,10 --seeds 40",
       "--grid: expected at most 1000000 episodes in all (each one's result is kept in memory "
       "until the results are written), found 10000 cells × 4 policies × 40 seeds"},
  };
  for (const auto& [arguments, message] : cases) {
    TempDirectory work;
    const auto start = std::chrono::steady_clock::now();
    const Outcome outcome = dynamix("sweep " + arguments + " --out " + quoted(work / "sweep"));
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
    CHECK(outcome.status == 2);
    CHECK(outcome.stderr_text == "dynamix: " + message + "\n");
    CHECK(fs::is_empty(work.path()));
  }
}

TEST_CASE("dynamix sweep --resume refuses a directory another sweep left and keeps it") {
  TempDirectory work;
  const std::string out = work / "sweep";
  REQUIRE(dynamix(kSweep + " --max-episodes 1 --out " + quoted(out)).status == 0);
  const std::string definition = contents(out + ".partial/run.json");
  const Outcome other = dynamix(kSweep + " --seed 7 --resume --out " + quoted(out));
  CHECK(other.status == 2);
  CHECK(other.stderr_text.find("different sweep") != std::string::npos);
  CHECK(std::count(other.stderr_text.begin(), other.stderr_text.end(), '\n') == 1);
  CHECK(contents(out + ".partial/run.json") == definition);
  CHECK(std::distance(fs::directory_iterator(out + ".partial/episodes"), {}) == 1);
}

/// Servers follow the node count: 2 cells, not 4, beside the ring/ps axis.
const std::string kZipped = "sweep --scenario " +
                            (kSourceDir / "scenarios/studies/trial_cluster.yaml").string() +
                            " --grid-zip topology.fabric.nodes=12,64 --grid-zip sync.servers=3,16"
                            " --grid sync.architecture=ps,ring --policies static:64 --seeds 1"
                            " --set training.budget_time_s=5 --quiet";

TEST_CASE("dynamix sweep --grid-zip ties keys: their i-th values go together, once each") {
  TempDirectory work;
  const Outcome outcome = dynamix(kZipped + " --out " + quoted(work / "sweep"));
  REQUIRE_MESSAGE(outcome.status == 0, outcome.stderr_text);
  const Csv results = read_csv(work.path() / "sweep" / "results.csv");
  REQUIRE(results.rows.size() == 4);
  CHECK(results.header[1] == "sync.architecture");
  CHECK(results.header[2] == "topology.fabric.nodes");
  CHECK(results.header[3] == "sync.servers");
  for (std::size_t i = 0; i < results.rows.size(); ++i) {
    const auto& row = results.rows[i];
    CAPTURE(i);
    CHECK(row[1] == (i < 2 ? "ps" : "ring"));
    CHECK(row[2] == (i % 2 == 0 ? "12" : "64"));
    CHECK(row[3] == (i % 2 == 0 ? "3" : "16"));
    CHECK(row[results.column("status")] == "ok");
  }
  // 16 servers alone would not fit 12 nodes: zipped values are checked only together.
  CHECK(contents(work.path() / "sweep" / "run.json").find("\"grid_zip\": [") != std::string::npos);
}

TEST_CASE("dynamix sweep --resume refuses a sweep whose keys were a product, not a zip") {
  const auto sweep = [](const std::string& option) {
    return "sweep --scenario " + (kSourceDir / "scenarios/studies/trial_cluster.yaml").string() +
           " " + option + " topology.fabric.nodes=16,64 " + option +
           " sync.servers=2,4 --policies static:64 --seeds 1 --set training.budget_time_s=5 "
           "--quiet";
  };
  TempDirectory work;
  const std::string out = work / "sweep";
  REQUIRE(dynamix(sweep("--grid-zip") + " --max-episodes 1 --out " + quoted(out)).status == 0);
  const Outcome other = dynamix(sweep("--grid") + " --resume --out " + quoted(out));
  CHECK(other.status == 2);
  CHECK(other.stderr_text.find("different sweep") != std::string::npos);
  CHECK(dynamix(sweep("--grid-zip") + " --resume --out " + quoted(out)).status == 0);
}

#ifdef DYNAMIX_MPI
TEST_CASE("mpirun -n 2 dynamix sweep writes the bytes of the single-process run, and resumes") {
  if (!have_mpirun()) {
    MESSAGE("skipped: no mpirun on PATH (Debian: apt-get install openmpi-bin)");
    return;
  }
  TempDirectory work;
  const auto over_mpi = dynamix_over_mpi;
  REQUIRE(dynamix(kSweep + " --jobs 1 --out " + quoted(work / "one")).status == 0);
  const Outcome spread = over_mpi(kSweep + " --jobs 2 --out " + quoted(work / "ranks"));
  REQUIRE_MESSAGE(spread.status == 0, spread.stderr_text);
  CHECK(contents(work.path() / "one" / "results.csv") ==
        contents(work.path() / "ranks" / "results.csv"));
  CHECK(read_csv(work.path() / "ranks" / "timing.csv").rows.size() == 16);

  const std::string out = work / "resumed";
  const Outcome first = over_mpi(kSweep + " --max-episodes 5 --out " + quoted(out));
  REQUIRE_MESSAGE(first.status == 0, first.stderr_text);
  CHECK(std::distance(fs::directory_iterator(out + ".partial/episodes"), {}) == 5);
  REQUIRE(over_mpi(kSweep + " --resume --out " + quoted(out)).status == 0);
  CHECK(contents(work.path() / "one" / "results.csv") == contents(fs::path(out) / "results.csv"));
}
#else
TEST_CASE("dynamix sweep built without MPI refuses to run as one of several MPI ranks") {
  MESSAGE("skipped the 2-rank mpirun sweep: dynamix was built without MPI (-Dmpi)");
  ::setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
  TempDirectory work;
  const Outcome outcome = dynamix(kSweep + " --out " + quoted(work / "sweep"));
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  CHECK(outcome.status == 2);
  CHECK(outcome.stderr_text.find("built without") != std::string::npos);
  CHECK(fs::is_empty(work.path()));
}
#endif

TEST_CASE("dynamix sweep refuses bad grids with one line before running anything") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--grid bogus=1,2", "bogus"},
      {"--grid training.bogus=1", "training.bogus"},
      {"--grid batch_size=64,abc", "batch_size=abc"},
      {"--grid batch_size=", "non-empty values"},
      {"--grid batch_size=64,64", "distinct"},
      {"", "at least one KEY=V1,V2"},
      {"--grid seed=1,2", "not a results.csv column"},
      {"--grid batch_size=64 --grid batch_size=32", "each key once"},
      {"--grid batch_size=64 --policies goodput,nonsense", "nonsense"},
      {"--grid-zip batch_size=64,128 --grid-zip sync.servers=1",
       "--grid-zip: sync.servers: expected as many values as batch_size (2), found 1"},
      {"--grid batch_size=64 --grid-zip batch_size=32", "each key once"},
  };
  for (const auto& entry : cases) {
    // Named references, not a structured binding: CAPTURE's lambda cannot capture one before C++23.
    const std::string& arguments = entry.first;
    const std::string& named = entry.second;
    CAPTURE(arguments);
    TempDirectory work;
    const Outcome outcome = dynamix("sweep " + arguments + " --out " + quoted(work / "sweep"));
    CHECK(outcome.status == 2);
    CHECK(outcome.stderr_text.starts_with("dynamix: "));
    CHECK(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n') == 1);
    CHECK(outcome.stderr_text.find(named) != std::string::npos);
    CHECK(fs::is_empty(work.path()));
  }
}

}  // namespace
}  // namespace dynamix
