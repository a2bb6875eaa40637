// End to end: what simulate records (--record), summary.json's totals and stop reason,
// decisions.csv's columns, a policy's own decision interval, and train's run.json and flags.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "apps/train_options.h"
#include "gym/env_knobs.h"
#include "sim/io/sha256.h"
#include "sim/io/sources.h"
#include "sim/scenario/scenario_names.h"
#include "studies/version.h"
#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using namespace testing;
namespace fs = std::filesystem;

double number(const Csv& csv, std::size_t row, const std::string& column) {
  return std::stod(csv.rows[row][csv.column(column)]);
}

TEST_CASE("simulate records windows by default, iterations or nothing on request") {
  TempDirectory work;
  const std::string command = "simulate --iterations 25 --seed 4 --decision-interval 10 --out ";
  REQUIRE(dynamix(command + quoted(work / "windows")).status == 0);
  REQUIRE(dynamix(command + quoted(work / "all") + " --record iterations").status == 0);
  REQUIRE(dynamix(command + quoted(work / "none") + " --record none").status == 0);
  CHECK_FALSE(fs::exists(work.path() / "windows" / "iterations.csv"));
  CHECK_FALSE(fs::exists(work.path() / "all" / "windows.csv"));
  CHECK_FALSE(fs::exists(work.path() / "none" / "iterations.csv"));
  CHECK_FALSE(fs::exists(work.path() / "none" / "windows.csv"));
  for (const char* run : {"windows", "all", "none"}) {
    CAPTURE(run);
    CHECK(contents(work.path() / run / "validation.csv") ==
          contents(work.path() / "all" / "validation.csv"));
    CHECK(YAML::LoadFile(work / (std::string(run) + "/summary.json"))["record"].as<std::string>() ==
          (std::string(run) == "all" ? "iterations" : run));
  }

  // 25 iterations in windows of 10: two full windows and a last one of 5, one row per worker.
  const Csv windows = read_csv(work.path() / "windows" / "windows.csv");
  const Csv iterations = read_csv(work.path() / "all" / "iterations.csv");
  const std::size_t workers = 8;
  REQUIRE(windows.rows.size() == 3 * workers);
  CHECK(windows.rows.back()[windows.column("iterations")] == "5");
  CHECK(windows.rows.back()[windows.column("first_iteration")] == "20");
  // Each window's row is the mean (or sum) of its worker's iterations.
  for (std::size_t w = 0; w < workers; ++w) {
    CAPTURE(w);
    const std::size_t window_row = workers + w;  // window 1: iterations 10..19
    double compute = 0, bytes = 0, straggling = 0;
    for (std::size_t i = 10; i < 20; ++i) {
      const std::size_t row = i * workers + w;
      REQUIRE(iterations.rows[row][iterations.column("worker")] == std::to_string(w));
      compute += number(iterations, row, "compute_s") / 10;
      bytes += number(iterations, row, "bytes_sent");
      straggling += number(iterations, row, "straggling") / 10;
    }
    CHECK(number(windows, window_row, "compute_s") == doctest::Approx(compute).epsilon(1e-9));
    CHECK(number(windows, window_row, "bytes_sent") == doctest::Approx(bytes).epsilon(1e-9));
    CHECK(number(windows, window_row, "straggling") == doctest::Approx(straggling));
    CHECK(number(windows, window_row, "start_s") == number(iterations, 10 * workers, "start_s"));
    CHECK(windows.rows[window_row][windows.column("epoch")] ==
          iterations.rows[19 * workers + w][iterations.column("epoch")]);
  }

  const Outcome bad = dynamix("simulate --record everything --out " + quoted(work / "bad"));
  CHECK(bad.status == 2);
  CHECK(bad.stderr_text ==
        "dynamix: --record: expected iterations, windows or none, found 'everything'\n");
  CHECK_FALSE(fs::exists(work.path() / "bad"));
}

TEST_CASE("summary.json gives the mean iteration time, samples per second and why the run ended") {
  TempDirectory work;
  REQUIRE(dynamix("simulate --iterations 30 --batch-size 64 --out " + quoted(work / "a")).status ==
          0);
  const YAML::Node summary = YAML::LoadFile(work / "a/summary.json");
  const double total = summary["total_time_s"].as<double>();
  CHECK(summary["mean_iteration_s"].as<double>() == doctest::Approx(total / 30));
  CHECK(summary["samples"].as<std::int64_t>() == 30 * 8 * 64);
  CHECK(summary["samples_per_s"].as<double>() == doctest::Approx(30 * 8 * 64 / total));
  CHECK(summary["stop_reason"].as<std::string>() == "iteration_budget");

  const std::map<std::string, std::string> reasons = {
      {"--set training.budget_epochs=1", "epoch_budget"},
      {"--set training.budget_time_s=20", "time_budget"},
      {"--set training.target_accuracy=0.3 --stop-at-target", "target_reached"},
      {"--policy goodput --set training.budget_epochs=1", "epoch_budget"},
  };
  int run = 0;
  for (const auto& entry : reasons) {
    const auto& [options, reason] = entry;
    CAPTURE(entry.first);
    // Appended, not "r" + ...: GCC 12 flags that operator+ with a false -Wrestrict.
    const std::string out = work / std::string("r").append(std::to_string(run++));
    const Outcome outcome = dynamix("simulate --record none " + options + " --out " + quoted(out));
    REQUIRE_MESSAGE(outcome.status == 0, outcome.stderr_text);
    CHECK(YAML::LoadFile(out + "/summary.json")["stop_reason"].as<std::string>() == reason);
    CHECK(outcome.stdout_text.find("stopped by        " + reason) != std::string::npos);
  }
}

TEST_CASE("decisions.csv has no blank field and its columns agree with one another") {
  TempDirectory work;
  const Outcome outcome = dynamix(
      "simulate --policy goodput --set training.budget_epochs=2 --out " + quoted(work / "run"));
  REQUIRE_MESSAGE(outcome.status == 0, outcome.stderr_text);
  const Csv csv = read_csv(work.path() / "run" / "decisions.csv");
  CHECK(csv.header == std::vector<std::string>{"decision", "iteration", "time_s", "worker",
                                               "action", "previous_batch", "requested_batch",
                                               "batch_size", "clamped", "hold", "global_batch",
                                               "reward"});
  REQUIRE(csv.rows.size() > 8);
  const std::size_t workers = 8;
  bool changed = false;
  for (std::size_t r = 0; r < csv.rows.size(); ++r) {
    const auto& row = csv.rows[r];
    for (const std::string& field : row) CHECK_FALSE(field.empty());
    CHECK(row[csv.column("action")] == "-1");  // goodput sets batches directly
    const int batch = std::stoi(row[csv.column("batch_size")]);
    CHECK(row[csv.column("hold")] ==
          (batch == std::stoi(row[csv.column("previous_batch")]) ? "1" : "0"));
    CHECK(row[csv.column("clamped")] ==
          (batch == std::stoi(row[csv.column("requested_batch")]) ? "0" : "1"));
    changed = changed || row[csv.column("hold")] == "0";
    if (r >= workers) {  // the batch before a decision is the one the previous decision set
      CHECK(row[csv.column("previous_batch")] == csv.rows[r - workers][csv.column("batch_size")]);
    }
    int global = 0;
    for (std::size_t w = r - r % workers; w < r - r % workers + workers; ++w) {
      global += std::stoi(csv.rows[w][csv.column("batch_size")]);
    }
    CHECK(std::stoi(row[csv.column("global_batch")]) == global);
  }
  CHECK(changed);
}

const std::string kTinyTrain =
    "train --steps 16 --envs 2 --rollout-steps 4 --eval-every 100 --set training.budget_epochs=1 "
    "--quiet";

TEST_CASE("simulate --policy ppo decides at the policy's own interval unless told otherwise") {
  TempDirectory work;
  const Outcome trained =
      dynamix(kTinyTrain + " --decision-interval 5 --out " + quoted(work / "train"));
  REQUIRE_MESSAGE(trained.status == 0, trained.stderr_text);
  const std::string policy = " --policy ppo:" + quoted(work / "train/policy.pt");
  const std::string budget = " --iterations 40 --record none";

  const Outcome own = dynamix("simulate" + policy + budget + " --out " + quoted(work / "own"));
  REQUIRE_MESSAGE(own.status == 0, own.stderr_text);
  CHECK(own.stderr_text.empty());
  const Csv decisions = read_csv(work.path() / "own" / "decisions.csv");
  // The reset window, then one decision every 5 iterations.
  CHECK(decisions.rows.front()[decisions.column("iteration")] == "10");
  CHECK(decisions.rows.back()[decisions.column("iteration")] == "40");
  for (const auto& row : decisions.rows) {
    const int action = std::stoi(row[decisions.column("action")]);
    CHECK(action >= 0);
    CHECK(action < 5);
  }

  const Outcome told = dynamix("simulate" + policy + budget + " --decision-interval 10 --out " +
                               quoted(work / "told"));
  REQUIRE_MESSAGE(told.status == 0, told.stderr_text);
  CHECK(told.stderr_text ==
        "dynamix: warning: --decision-interval 10 overrides the 5 iterations the policy was "
        "trained with\n");
  CHECK(read_csv(work.path() / "told" / "decisions.csv")
            .rows.front()[decisions.column("iteration")] == "20");

  // evaluate follows the same rule, per entry, naming the entry's label.
  const std::string evaluate =
      "evaluate --seeds 1 --quiet --set training.budget_epochs=1 "
      "--policies tiny=ppo:" +
      quoted(work / "train/policy.pt");
  const Outcome evaluated = dynamix(evaluate + " --out " + quoted(work / "eval-own"));
  REQUIRE_MESSAGE(evaluated.status == 0, evaluated.stderr_text);
  CHECK(evaluated.stderr_text.empty());
  const Outcome overridden =
      dynamix(evaluate + " --decision-interval 10 --out " + quoted(work / "eval-told"));
  REQUIRE_MESSAGE(overridden.status == 0, overridden.stderr_text);
  CHECK(overridden.stderr_text ==
        "dynamix: warning: --decision-interval 10 overrides the 5 iterations tiny was trained "
        "with\n");
  const auto decisions_of = [&](const char* run) {
    const Csv results = read_csv(work.path() / run / "results.csv");
    return results.rows.front()[results.column("decisions")];
  };
  CHECK(std::stoi(decisions_of("eval-own")) > std::stoi(decisions_of("eval-told")));
}

TEST_CASE("train's run.json records every option from the tables, and the randomization") {
  TempDirectory work;
  const Outcome plain = dynamix(kTinyTrain + " --gamma 0.99 --out " + quoted(work / "plain"));
  REQUIRE_MESSAGE(plain.status == 0, plain.stderr_text);
  const YAML::Node run = YAML::LoadFile(work / "plain/run.json");
  for (const Knob<TrainOptions>& knob : train_knobs().knobs) {
    CAPTURE(knob.key);
    // --out, --quiet, --resume and --strict say how train runs, not what it trains; a PPO or
    // environment option is recorded once, in its own block.
    const bool part = find_knob(ppo_knobs(), knob.key) || find_knob(env_knobs(), knob.key);
    CHECK(run[snake_case(knob.key)].IsDefined() == (knob.recorded && !part));
  }
  for (const Knob<EnvOptions>& knob : env_knobs().knobs) {
    CAPTURE(knob.key);
    CHECK(run["environment"][snake_case(knob.key)].IsDefined());
  }
  CHECK(run["steps"].as<int>() == 16);
  CHECK(run["envs"].as<int>() == 2);
  CHECK_FALSE(run["gamma"].IsDefined());
  CHECK(run["set"].size() == 1);
  CHECK(run["set"][0].as<std::string>() == "training.budget_epochs=1");
  CHECK_FALSE(run["out"].IsDefined());
  const YAML::Node ppo = run["ppo"];
  REQUIRE(ppo.IsMap());
  for (const Knob<PpoOptions>& knob : ppo_knobs().knobs) {
    CAPTURE(knob.key);
    CHECK(ppo[snake_case(knob.key)].IsDefined());
  }
  CHECK(ppo["gamma"].as<double>() == 0.99);
  CHECK(ppo["rollout_steps"].as<int>() == 4);
  CHECK(ppo["hidden_sizes"].IsSequence());
  CHECK_FALSE(ppo["coordinated_exploration"].as<bool>());
  CHECK(run["environment"]["decision_interval"].as<int>() == 20);
  CHECK(run["environment"]["action_base"].as<std::string>() == "goodput");
  CHECK(run["environment"]["actions"].size() == 5);
  CHECK(run["environment"]["actions"][2].as<int>() == 100);
  CHECK_FALSE(run["randomize"].as<bool>());
  CHECK_FALSE(run["randomization"].IsDefined());
  CHECK(run["kernels"]["pinned"].as<bool>());
  CHECK(run["kernels"]["blas_core"].as<std::string>() == "Prescott");
  CHECK(run["kernels"]["aten_cpu_capability"].as<std::string>() == "NO AVX");
  CHECK(run["kernels"]["torch_threads"].as<int>() == 1);
  // Provenance: the build and the inputs' bytes in run.json, the host and date beside it.
  const YAML::Node provenance = run["provenance"];
  CHECK(provenance["version"].as<std::string>() == kDynamixVersion);
  CHECK_FALSE(provenance["commit"].as<std::string>().empty());
  CHECK(provenance["features"]["ppo"].as<bool>());
  REQUIRE(provenance["inputs"].size() == 1);
  CHECK(provenance["inputs"][0]["path"].as<std::string>() == resolve_scenario("quickstart"));
  CHECK(provenance["inputs"][0]["sha256"].as<std::string>() ==
        sha256_of(read_text(resolve_scenario("quickstart"))));
  const YAML::Node host = YAML::LoadFile(work / "plain/provenance.json");
  CHECK_FALSE(host["cpu"].as<std::string>().empty());
  CHECK(host["date"].as<std::string>().ends_with("Z"));
  CHECK(host["commit"].as<std::string>() == provenance["commit"].as<std::string>());

  const Outcome randomized =
      dynamix(kTinyTrain + " --randomize --family-budget 3 --coordinated-exploration --out " +
              quoted(work / "randomized"));
  REQUIRE_MESSAGE(randomized.status == 0, randomized.stderr_text);
  const YAML::Node other = YAML::LoadFile(work / "randomized/run.json");
  CHECK(other["ppo"]["coordinated_exploration"].as<bool>());
  const YAML::Node ranges = other["randomization"];
  REQUIRE(ranges.IsMap());
  CHECK(ranges["workers"].size() == 2);
  CHECK(ranges["workers"][0].as<int>() <= ranges["workers"][1].as<int>());
  CHECK(ranges["bandwidth_gbps"].size() == 2);
  CHECK(ranges["gpu_types"].size() >= 1);
  CHECK(ranges["background_probability"].IsDefined());
  CHECK(ranges["reference"]["budget_factor"].as<double>() == 3);
  CHECK(ranges["reference"]["batch"].as<int>() == 64);
}

TEST_CASE("--coordinated-exploration is a flag, and a resume must repeat it") {
  TempDirectory work;
  const Outcome with_value =
      dynamix(kTinyTrain + " --coordinated-exploration 1 --out " + quoted(work / "x"));
  CHECK(with_value.status == 2);
  const Outcome run =
      dynamix(kTinyTrain + " --coordinated-exploration --out " + quoted(work / "train"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  fs::copy(work.path() / "train", work.path() / "train.partial");
  const Outcome without = dynamix(kTinyTrain + " --resume --out " + quoted(work / "train"));
  CHECK(without.status == 2);
  CHECK(without.stderr_text.find("--coordinated-exploration: expected 'true'") !=
        std::string::npos);
  const Outcome with =
      dynamix(kTinyTrain + " --coordinated-exploration --resume --out " + quoted(work / "train"));
  CHECK_MESSAGE(with.status == 0, with.stderr_text);
}

TEST_CASE("A resume of a randomized run must repeat its --family-budget") {
  TempDirectory work;
  const std::string randomized = kTinyTrain + " --randomize --family-budget 2";
  const Outcome run = dynamix(randomized + " --out " + quoted(work / "train"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  fs::copy(work.path() / "train", work.path() / "train.partial");
  const Outcome other =
      dynamix(kTinyTrain + " --randomize --resume --out " + quoted(work / "train"));
  CHECK(other.status == 2);
  CHECK(other.stderr_text.find("--family-budget: expected '2'") != std::string::npos);
  const Outcome same = dynamix(randomized + " --resume --out " + quoted(work / "train"));
  CHECK_MESSAGE(same.status == 0, same.stderr_text);
}

TEST_CASE(
    "With DYNAMIX_KERNELS=native training runs the kernels the libraries choose, as run.json "
    "says") {
  TempDirectory work;
  const Outcome native =
      run_shell("DYNAMIX_KERNELS=native OPENBLAS_CORETYPE=Core2 " + quoted(DYNAMIX_BINARY) + " " +
                kTinyTrain + " --out " + quoted(work / "native"));
  REQUIRE_MESSAGE(native.status == 0, native.stderr_text);
  const YAML::Node kernels = YAML::LoadFile(work / "native/run.json")["kernels"];
  CHECK_FALSE(kernels["pinned"].as<bool>());
  CHECK(kernels["blas_core"].as<std::string>() == "Core2");

  const Outcome bad = run_shell("DYNAMIX_KERNELS=fast " + quoted(DYNAMIX_BINARY) + " " +
                                kTinyTrain + " --out " + quoted(work / "bad"));
  CHECK(bad.status == 2);
  CHECK(bad.stderr_text.find("DYNAMIX_KERNELS: expected portable (the default) or native") !=
        std::string::npos);
}

TEST_CASE("oracle --rollout writes each seed's goodput:100 and rollout times and its changes") {
  TempDirectory work;
  const Outcome run = dynamix(
      "oracle --rollout --rollout-block 10 --seeds 2 --seed 1 -q --set "
      "training.target_accuracy=0.6 --set training.budget_epochs=20 --out " +
      quoted(work / "rollout"));
  REQUIRE(run.status == 0);
  CHECK(run.stdout_text.find("| quickstart |") != std::string::npos);
  const Csv csv = read_csv(work.path() / "rollout" / "rollout.csv");
  REQUIRE(csv.rows.size() == 2);
  for (const auto& row : csv.rows) {
    const double base = std::stod(row[csv.column("goodput100_time_to_target_s")]);
    const double rollout = std::stod(row[csv.column("rollout_time_to_target_s")]);
    CHECK(rollout <= base);
    // Every change is "decision:percent", and there are as many as changed_decisions says.
    const std::string text = row[csv.column("changes")];
    const std::vector<std::string> changes =
        text.empty() ? std::vector<std::string>{} : split(text, ' ');
    CHECK(std::to_string(changes.size()) == row[csv.column("changed_decisions")]);
    for (const std::string& change : changes) CHECK(change.find(':') != std::string::npos);
  }
  CHECK_FALSE(fs::exists(work.path() / "rollout" / "schedules.csv"));
}

TEST_CASE("oracle --rollout --rollout-rules starts from the best rule and is never slower") {
  TempDirectory work;
  const Outcome run = dynamix(
      "oracle --rollout --rollout-rules --rollout-block 10 --seeds 2 -q --set "
      "training.target_accuracy=0.6 --set training.budget_epochs=20 --out " +
      quoted(work / "rollout"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  CHECK(run.stdout_text.find("# Oracle: hindsight rollout over rules") != std::string::npos);
  CHECK(run.stdout_text.find("Geometric means over the 1 scenarios") != std::string::npos);
  const Csv csv = read_csv(work.path() / "rollout" / "rollout.csv");
  REQUIRE(csv.rows.size() == 2);
  for (const auto& row : csv.rows) {
    CHECK(std::stod(row[csv.column("rollout_time_to_target_s")]) <=
          std::stod(row[csv.column("base_time_to_target_s")]));
    // Both seeds continue with the same per-scenario best rule; a change names another rule.
    CHECK(row[csv.column("base_rule")] == csv.rows.front()[csv.column("base_rule")]);
    const std::string text = row[csv.column("changes")];
    for (const std::string& change : text.empty() ? std::vector<std::string>{} : split(text, ' ')) {
      CHECK(change.substr(change.find(':') + 1) != row[csv.column("base_rule")]);
    }
  }
  const Outcome alone = dynamix("oracle --rollout-rules --out " + quoted(work / "alone"));
  CHECK(alone.status == 2);
  CHECK(alone.stderr_text ==
        "dynamix: --rollout-rules: expected --rollout as well, found --rollout-rules alone\n");
  CHECK_FALSE(fs::exists(work.path() / "alone"));
}

}  // namespace
}  // namespace dynamix

namespace dynamix {
namespace {

TEST_CASE("evaluate writes run.json: its options, each entry, and the hashes of what it read") {
  TempDirectory work;
  const std::filesystem::path scenario = kSourceDir / "scenarios" / "quickstart.yaml";
  const auto evaluate = [&](const std::string& jobs, const std::string& out) {
    return dynamix("evaluate --seeds 1 --policies fixed=static:64,goodput --quiet --jobs " + jobs +
                   " --set training.budget_epochs=2 --scenario " + quoted(scenario) + " --out " +
                   quoted(work / out));
  };
  const Outcome one = evaluate("1", "one");
  REQUIRE_MESSAGE(one.status == 0, one.stderr_text);
  const YAML::Node run = YAML::LoadFile(work / "one/run.json");
  CHECK(run["command"].as<std::string>() == "evaluate");
  CHECK(run["seeds"].as<int>() == 1);
  CHECK_FALSE(run["jobs"].IsDefined());
  REQUIRE(run["entries"].size() == 2);
  CHECK(run["entries"][0]["label"].as<std::string>() == "fixed");
  CHECK(run["entries"][1]["decision_interval"].as<int>() == 10);
  REQUIRE(run["provenance"]["inputs"].size() == 1);
  CHECK(run["provenance"]["inputs"][0]["sha256"].as<std::string>() ==
        sha256_of(read_text(scenario.string())));
  CHECK(std::filesystem::is_regular_file(work / "one/provenance.json"));
  // The same evaluation on other threads records the same bytes.
  REQUIRE(evaluate("2", "two").status == 0);
  CHECK(contents(work / "one/run.json") == contents(work / "two/run.json"));
}

}  // namespace
}  // namespace dynamix
