// End to end: `dynamix train` learns inside its stored reward band, and its policy.pt goes
// through `export` and `evaluate`; bad policies and resumes are refused with status 2.
#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "dynamix_config.h"
#include "sim/scenario/scenario_names.h"
#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using namespace testing;

TEST_CASE("train under a file-size limit stops with one line and keeps its staging folder") {
  TempDirectory work;
  // SIGXFSZ ignored, so that the write itself fails (EFBIG), as under a full disk.
  const Outcome run = run_shell("ulimit -f 100; trap '' XFSZ; " + quoted(DYNAMIX_BINARY) +
                                " train --steps 16 --envs 2 --rollout-steps 4 --eval-every 100 "
                                "--set training.budget_epochs=1 --quiet --out " +
                                quoted(work / "run"));
  CHECK(run.status == 2);
  CHECK(run.stderr_text.find("checkpoint.pt: expected a file that can be written durably, found "
                             "File too large") != std::string::npos);
  CHECK(std::count(run.stderr_text.begin(), run.stderr_text.end(), '\n') == 1);
  CHECK_FALSE(fs::exists(work.path() / "run"));
  CHECK(fs::exists(work.path() / "run.partial"));
}

TEST_CASE("train warns once about an implausible value its run loads twice (scenario, family)") {
  TempDirectory work;
  const Outcome run = dynamix(
      "train --randomize --steps 16 --envs 2 --rollout-steps 4 --eval-every 100 --set "
      "training.budget_epochs=1 --set sync.intra_node_gbps=200e9 --quiet --out " +
      quoted(work / "run"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  CHECK(run.stderr_text ==
        "dynamix: warning: --set sync.intra_node_gbps=200e9: sync.intra_node_gbps 200000000000 is "
        "above any NVLink we know (\u2264 14400 Gb/s); did you mean 200?\n");
}

TEST_CASE("A seeded short training run passes the repository's reward band" *
          doctest::timeout(300)) {
  TempDirectory work;
  const std::string band = (kSourceDir / "tests" / "apps" / "reward_band.yaml").string();
  const Outcome run =
      dynamix("band check --band " + quoted(band) + " --keep " + quoted(work / "train"));
  REQUIRE_MESSAGE(run.status == 0, std::string(run.stdout_text + run.stderr_text));
  CHECK(run.stdout_text.find("band check (seed 1): passed") != std::string::npos);
  // The band itself must say something: returns lie between about -1.4 and -1.7 (k = 20, the
  // randomized start of each update's episodes); the stored bins, the range of seeds 1-4 plus
  // margins, are 0.18-0.25 wide, and a bin of 0.4 would admit most curves.
  const YAML::Node stored = YAML::LoadFile(band);
  REQUIRE(stored["bins"].size() >= 3);
  for (const YAML::Node& bin : stored["bins"])
    CHECK(bin["high"].as<double>() - bin["low"].as<double>() < 0.4);
  CHECK(stored["min_departure_share"].as<double>() > 0);

  {  // Proof of learning: the trained policy departs from the untrained one's neutral action
     // (which a 1-update policy still takes everywhere) and so evaluates differently.
    const Outcome untrained =
        dynamix("train --steps 512 --envs 8 --eval-every 1000 --seed 1 --out " +
                quoted(work / "untrained"));
    REQUIRE_MESSAGE(untrained.status == 0, untrained.stderr_text);
    const Outcome compared =
        dynamix("evaluate --seeds 2 --policies trained=ppo:" + quoted(work / "train/policy.pt") +
                ",untrained=ppo:" + quoted(work / "untrained/policy.pt") + " --out " +
                quoted(work / "compared"));
    REQUIRE_MESSAGE(compared.status == 0, compared.stderr_text);
    const Csv results = read_csv(work.path() / "compared" / "results.csv");
    REQUIRE(results.rows.size() == 4);
    const std::size_t departures = results.column("departure_share");
    double trained = 0, untrained_share = 0;
    std::set<std::string> outcomes[2];
    for (const auto& row : results.rows) {
      const bool is_trained = row[results.column("policy")] == "trained";
      (is_trained ? trained : untrained_share) += std::stod(row[departures]);
      outcomes[is_trained ? 1 : 0].insert(row[results.column("time_to_target_s")] + " " +
                                          row[results.column("mean_batch_size")]);
    }
    CHECK(untrained_share == 0);
    CHECK(trained > 0);
    CHECK(outcomes[0] != outcomes[1]);
  }

  {  // Its policy.pt re-exports from the checkpoint and runs in evaluate.
    const Csv curve_csv = read_csv(work.path() / "train" / "train_curve.csv");
    for (const char* column : {"update", "env_steps", "wall_s", "mean_return",
                               "eval_time_to_target_s", "eval_final_accuracy"}) {
      curve_csv.column(column);
    }
    // Into a folder that does not exist yet, as dynamix.export_policy does.
    const Outcome exported = dynamix("export --checkpoint " + quoted(work / "train/checkpoint.pt") +
                                     " --out " + quoted(work / "new/folder/again.pt"));
    REQUIRE_MESSAGE(exported.status == 0, exported.stderr_text);
    const Outcome evaluated =
        dynamix("evaluate --policies static:128,ppo:" + quoted(work / "new/folder/again.pt") +
                " --seeds 1 --set training.budget_epochs=2 --out " + quoted(work / "eval"));
    REQUIRE_MESSAGE(evaluated.status == 0, evaluated.stderr_text);
    const Csv results = read_csv(work.path() / "eval" / "results.csv");
    CHECK(results.rows.size() == 2);
    CHECK(results.rows[1][results.column("policy")] == "again");  // the file's stem
    CHECK(results.rows[1][results.column("kind")] == "learned");
    CHECK(contents(work.path() / "eval" / "summary.md").find(" | again | ") != std::string::npos);
  }
}

TEST_CASE("evaluate refuses a corrupt policy.pt and unknown policies with status 2") {
  TempDirectory work;
  {
    std::ofstream corrupt(work / "policy.pt");
    corrupt << "not a TorchScript archive";
  }
  const Outcome corrupt = dynamix("evaluate --policies ppo:" + quoted(work / "policy.pt") +
                                  " --seeds 1 --out " + quoted(work / "eval"));
  CHECK(corrupt.status == 2);
  CHECK(corrupt.stderr_text.find("policy.pt") != std::string::npos);
  CHECK(std::count(corrupt.stderr_text.begin(), corrupt.stderr_text.end(), '\n') == 1);
  const Outcome unknown =
      dynamix("evaluate --policies pollux --seeds 1 --out " + quoted(work / "eval"));
  CHECK(unknown.status == 2);
  CHECK(unknown.stderr_text.find("goodput+proportional") != std::string::npos);
  CHECK_FALSE(fs::exists(work.path() / "eval"));
}

TEST_CASE("train --resume without an interrupted run is refused with status 2, leaving nothing") {
  TempDirectory work;
  const Outcome resumed = dynamix("train --resume --steps 100 --out " + quoted(work / "train"));
  CHECK(resumed.status == 2);
  CHECK(resumed.stderr_text.find("--resume") != std::string::npos);
  CHECK(fs::is_empty(work.path()));
}

TEST_CASE("train refuses each option out of range with status 2 and one line naming it") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--rollout-steps 0", "--rollout-steps: expected an integer in [1, 1048576], found 0"},
      {"--initial-hold 2", "--initial-hold: expected a number in [0, 1), found 2"},
      {"--learning-rate -1", "--learning-rate: expected a finite number > 0, found -1"},
      {"--learning-rate nan", "--learning-rate: expected a finite number > 0, found nan"},
      {"--gamma 2", "--gamma: expected a number in (0, 1], found 2"},
      {"--gamma 0", "--gamma: expected a number in (0, 1], found 0"},
      {"--gae-lambda 1.5", "--gae-lambda: expected a number in [0, 1], found 1.5"},
      {"--gae-lambda -0.5", "--gae-lambda: expected a number in [0, 1], found -0.5"},
      {"--entropy-coef -0.01", "--entropy-coef: expected a finite number >= 0, found -0.01"},
      {"--threads -1", "--threads: expected an integer in [0, 4096], found -1"},
      {"--decision-interval 0",
       "--decision-interval: expected an integer in [1, 1048576], found 0"},
      {"--envs 0", "--envs: expected an integer in [1, 4096], found 0"},
      {"--envs 100000", "--envs: expected an integer in [1, 4096], found 100000"},
      {"--eval-seeds 0", "--eval-seeds: expected an integer in [1, 100000], found 0"},
      {"--seed -1", "--seed: expected an integer >= 0, found -1"},
      {"--steps 0", "--steps: expected an integer in [1, 1000000000000], found 0"},
  };
  TempDirectory work;
  for (const auto& refusal : cases) {
    const std::string& option = refusal.first;
    CAPTURE(option);
    const std::string steps = option.starts_with("--steps") ? "" : " --steps 100";
    std::string command = "train ";
    command += option;
    command += steps;
    const Outcome refused = dynamix(command + " --out " + quoted(work / "train"));
    CHECK(refused.status == 2);
    CHECK(refused.stderr_text == "dynamix: " + refusal.second + "\n");
    CHECK(fs::is_empty(work.path()));
  }
}

/// A tiny training run: 2 updates of 2 environments × 4 decisions.
const std::string kTinyRun =
    "train --steps 16 --envs 2 --rollout-steps 4 --eval-every 100 --set training.budget_epochs=1";

TEST_CASE("train --select-on keeps the evaluated policy that scored best on the held-out set") {
  TempDirectory work;
  const Outcome run = dynamix(
      "train --steps 2048 --envs 2 --rollout-steps 64 --eval-every 4 --eval-seeds 1 "
      "--select-on quickstart --select-on lossy8 --seed 2 --quiet --out " +
      quoted(work / "train"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  CHECK(run.stdout_text.find("selected the policy that scored") != std::string::npos);
  const fs::path dir = work.path() / "train";
  CHECK(fs::exists(dir / "last_policy.pt"));
  CHECK_FALSE(fs::exists(dir / "selected_policy.pt"));
  // Scores every 4 updates (16 in all), and the final policy's among them.
  const Csv curve = read_csv(dir / "train_curve.csv");
  const std::size_t column = curve.column("selection_score");
  std::vector<double> scores;
  for (const auto& row : curve.rows) {
    if (!row[column].empty()) scores.push_back(std::stod(row[column]));
  }
  REQUIRE(scores.size() == 4);
  const YAML::Node selection = YAML::LoadFile((dir / "run.json").string())["selection"];
  CHECK(selection["scenarios"].size() == 2);
  CHECK(selection["score"].as<double>() ==
        doctest::Approx(*std::min_element(scores.begin(), scores.end())));
  // The best snapshot ships unless the fixed point scored better or reached where it missed, or
  // some single rule scored as well.
  const bool snapshot_ships =
      selection["score"].as<double>() <= selection["fixed_point_score"].as<double>() &&
      selection["misses_beside_fixed_point"].as<int>() == 0 &&
      selection["score"].as<double>() < selection["best_rule_score"].as<double>();
  CHECK(selection["shipped"].as<std::string>() == (snapshot_ships ? "snapshot" : "fixed point"));
  CHECK((contents(dir / "policy.pt") == contents(dir / "best_snapshot.pt")) == snapshot_ships);
  // The kept policy is the one that scored best: it runs like any policy.pt.
  const Outcome evaluated =
      dynamix("evaluate --policies ppo:" + quoted(dir / "policy.pt") +
              " --seeds 1 --set training.budget_epochs=2 --out " + quoted(work / "eval"));
  CHECK_MESSAGE(evaluated.status == 0, evaluated.stderr_text);
  const Outcome unknown =
      dynamix("train --steps 100 --select-on nowhere --out " + quoted(work / "refused"));
  CHECK(unknown.status == 2);
  CHECK_FALSE(fs::exists(work.path() / "refused"));
}

/// The episodes of one policy label in `evaluate`'s results.csv, under "scenario seed": each
/// row but for the columns that say what the policy is (policy, kind) and how it chose
/// (departure_share: non-neutral actions for a learned policy, batch changes for a rule).
std::map<std::string, std::vector<std::string>> episodes_of(const Csv& results,
                                                            const std::string& policy) {
  const std::size_t policy_column = results.column("policy");
  const std::set<std::size_t> skipped = {policy_column, results.column("kind"),
                                         results.column("departure_share")};
  std::map<std::string, std::vector<std::string>> episodes;
  for (const auto& row : results.rows) {
    if (row[policy_column] != policy) continue;
    std::vector<std::string> fields;
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (!skipped.contains(i)) fields.push_back(row[i]);
    }
    episodes[row[results.column("scenario")] + " " + row[results.column("seed")]] = fields;
  }
  return episodes;
}

TEST_CASE("train --select-on ships the fixed point goodput:100 when the best snapshot does worse") {
  TempDirectory work;
  // Untrained and free to depart from the neutral action (--initial-hold 0), the policy of seed
  // 3 does worse on hetero32 than always holding the goodput optimum.
  const std::string command = kTinyRun +
                              " --eval-seeds 1 --initial-hold 0 --select-on hetero32 --seed 3 "
                              "--quiet --out ";
  for (const char* threads : {"1", "2"}) {
    const Outcome run =
        dynamix(command + quoted(work / threads) + " --threads " + std::string(threads));
    REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
    CHECK(run.stdout_text.find("\npolicy.pt: the fixed point goodput:100 (selection ") !=
          std::string::npos);
    CHECK(run.stdout_text.find("); the best snapshot is in best_snapshot.pt\n") !=
          std::string::npos);
  }
  const fs::path dir = work.path() / "1";
  for (const char* file : {"policy.pt", "best_snapshot.pt", "last_policy.pt"}) {
    CAPTURE(file);
    CHECK(contents(dir / file) == contents(work.path() / "2" / file));
  }
  CHECK(contents(dir / "policy.pt") != contents(dir / "best_snapshot.pt"));
  CHECK_FALSE(fs::exists(dir / "fixed_point.pt"));
  const YAML::Node selection = YAML::LoadFile((dir / "run.json").string())["selection"];
  CHECK(selection["shipped"].as<std::string>() == "fixed point");
  CHECK(selection["fixed_point"].as<std::string>() == "goodput:100");
  CHECK(selection["fixed_point_score"].as<double>() < selection["score"].as<double>());
  CHECK(selection["misses_beside_fixed_point"].as<int>() == 0);
  // policy.pt runs as goodput:100 does, at the interval it was trained with, on the scenario it
  // was selected on and on another; the snapshot it replaced does not.
  const Outcome evaluated = dynamix(
      "evaluate --policies ppo:" + quoted(dir / "policy.pt") +
      ",goodput:100,ppo:" + quoted(dir / "best_snapshot.pt") +
      " --scenario hetero32 --scenario embedded:/scenarios/dynamic/validation/v8_dyn_lossy.yaml "
      "--seeds 2 --decision-interval 20 --out " +
      quoted(work / "eval"));
  REQUIRE_MESSAGE(evaluated.status == 0, evaluated.stderr_text);
  const Csv results = read_csv(work.path() / "eval" / "results.csv");
  const auto fixed_point = episodes_of(results, "policy");
  CHECK(fixed_point.size() == 4);
  CHECK(fixed_point == episodes_of(results, "goodput:100"));
  CHECK(fixed_point != episodes_of(results, "best_snapshot"));
  // It never took anything but the neutral action.
  for (const auto& row : results.rows) {
    if (row[results.column("policy")] == "policy") {
      CHECK(row[results.column("departure_share")] == "0");
    }
  }
}

TEST_CASE("train --select-on dynamic-validation ships the snapshot on a base without fixed point") {
  TempDirectory work;
  const Outcome run = dynamix(kTinyRun +
                              " --eval-seeds 1 --action-base balanced --select-on "
                              "dynamic-validation --seed 3 --quiet --out " +
                              quoted(work / "train"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  CHECK(run.stdout_text.find("\npolicy.pt: the best snapshot; the balanced action base has no "
                             "fixed point to check it against\n") != std::string::npos);
  const fs::path dir = work.path() / "train";
  CHECK(contents(dir / "policy.pt") == contents(dir / "best_snapshot.pt"));
  const YAML::Node selection = YAML::LoadFile((dir / "run.json").string())["selection"];
  CHECK(selection["shipped"].as<std::string>() == "snapshot");
  CHECK(selection["fixed_point"].IsNull());
  CHECK(selection["fixed_point_score"].IsNull());
  const Outcome listed = dynamix("scenarios --dynamic --validation");
  std::vector<std::string> held_out;
  for (const auto& path : selection["scenarios"]) held_out.push_back(path.as<std::string>());
  CHECK(held_out.size() == 4);
  CHECK(split(listed.stdout_text.substr(0, listed.stdout_text.size() - 1), '\n') == held_out);
}

TEST_CASE(
    "train --action-base rule anchors on the best rule that never missed and ranks them all") {
  TempDirectory work;
  const Outcome run = dynamix(kTinyRun +
                              " --eval-seeds 2 --action-base rule --select-on "
                              "embedded:/scenarios/dynamic/validation/v24_dyn_colocated.yaml "
                              "--seed 3 --out " +
                              quoted(work / "train"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  const YAML::Node json = YAML::LoadFile((work.path() / "train" / "run.json").string());
  const YAML::Node selection = json["selection"];
  // Every selectable rule and gns, best first.
  REQUIRE(selection["rules"].size() == 8);
  std::string anchor;
  double previous = 0;
  for (const auto& rule : selection["rules"]) {
    CHECK(rule["score"].as<double>() >= previous);
    previous = rule["score"].as<double>();
    if (anchor.empty() && rule["missed_episodes"].as<int>() == 0 &&
        rule["rule"].as<std::string>() != "gns") {
      anchor = rule["rule"].as<std::string>();
    }
  }
  REQUIRE_FALSE(anchor.empty());
  // The anchor is the fixed point and the first action; the run says so.
  CHECK(selection["fixed_point"].as<std::string>() == anchor);
  CHECK(run.stderr_text.find("anchor: " + anchor + ", the best rule that reached") !=
        std::string::npos);
  CHECK(selection["best_rule_score"].as<double>() == selection["rules"][0]["score"].as<double>());
  // A snapshot ships only if it beat every single rule.
  if (selection["shipped"].as<std::string>() == "snapshot") {
    CHECK(selection["score"].as<double>() < selection["best_rule_score"].as<double>());
  }
  // evaluate says which rules the policy chose.
  const Outcome evaluated =
      dynamix("evaluate --policies ppo:" + quoted(work.path() / "train" / "policy.pt") +
              " --scenario embedded:/scenarios/dynamic/validation/v24_dyn_colocated.yaml "
              "--seeds 1 --quiet --out " +
              quoted(work / "eval"));
  REQUIRE_MESSAGE(evaluated.status == 0, evaluated.stderr_text);
  const std::string summary = contents(work.path() / "eval" / "summary.md");
  CHECK(summary.find("## Rule choices") != std::string::npos);
  CHECK(summary.find("| v24_dyn_colocated | policy | `") != std::string::npos);
  const Csv choices = read_csv(work.path() / "eval" / "rule_choices.csv");
  REQUIRE_FALSE(choices.rows.empty());
  std::int64_t decided = 0;
  for (const auto& row : choices.rows) decided += std::stoll(row[choices.column("decisions")]);
  const Csv results = read_csv(work.path() / "eval" / "results.csv");
  CHECK(decided == std::stoll(results.rows.front()[results.column("decisions")]));
}

TEST_CASE("train names each selection scenario policy.pt missed, and the best rule there") {
  TempDirectory work;
  // A time budget nothing meets: every policy misses.
  std::string scenario = contents(kSourceDir / "scenarios" / "quickstart.yaml");
  const std::size_t budget = scenario.find("budget_time_s: 300");
  REQUIRE(budget != std::string::npos);
  scenario.replace(budget, 18, "budget_time_s: 1");
  const std::size_t topology = scenario.find("../topologies/");
  REQUIRE(topology != std::string::npos);
  scenario.replace(topology, 2, kSourceDir.string());
  std::ofstream(work.path() / "hopeless.yaml") << scenario;
  const Outcome run =
      dynamix(kTinyRun + " --eval-seeds 2 --select-on " + quoted(work / "hopeless.yaml") +
              " --seed 3 --quiet --out " + quoted(work / "train"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  CHECK(run.stdout_text.find("dynamix: policy.pt missed the target on quickstart in 2 of 2 "
                             "selection episodes; no rule reached it on every seed there "
                             "either\n") != std::string::npos);
  const YAML::Node misses =
      YAML::LoadFile((work.path() / "train" / "run.json").string())["selection"]["misses"];
  REQUIRE(misses.size() == 1);
  CHECK(misses[0]["scenario"].as<std::string>() == "quickstart");
  CHECK(misses[0]["missed_episodes"].as<int>() == 2);
  CHECK(misses[0]["best_rule"].IsNull());
}

TEST_CASE(
    "train stopped by SIGTERM while its selection runs the rules exits 130, writing nothing") {
  TempDirectory work;
  // The rules' selection episodes (six validation clusters, 10 seeds, 8 rules) take several
  // seconds before anything is written; the signal lands among them.
  const std::string shell =
      quoted(DYNAMIX_BINARY) + " train --steps 4096 --select-on validation --eval-seeds 10 --out " +
      quoted(work / "train") + " >/dev/null 2>" + quoted(work / "stderr.txt") +
      " & pid=$!; sleep 1.5; kill -TERM $pid; " + "wait $pid";
  const int raw = std::system(shell.c_str());
  REQUIRE(WIFEXITED(raw));
  CHECK(WEXITSTATUS(raw) == 130);
  CHECK(contents(work.path() / "stderr.txt") == "dynamix: interrupted; nothing was written\n");
  CHECK_FALSE(fs::exists(work.path() / "train"));
  CHECK_FALSE(fs::exists(work.path() / "train.partial"));
}

TEST_CASE("train --train-on refuses --randomize beside it with status 2") {
  TempDirectory work;
  const Outcome refused =
      dynamix("train --steps 16 --randomize --train-on dynamic --out " + quoted(work / "train"));
  CHECK(refused.status == 2);
  CHECK(refused.stderr_text ==
        "dynamix: --train-on: expected either --train-on or --randomize, found both\n");
  CHECK_FALSE(fs::exists(work.path() / "train"));
}

TEST_CASE("train --train-on takes named sets and short names, and records the files") {
  TempDirectory work;
  const Outcome run = dynamix(kTinyRun + " --train-on budget --train-on hetero32 --quiet --out " +
                              quoted(work / "train"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  const YAML::Node json = YAML::LoadFile((work.path() / "train" / "run.json").string());
  std::vector<std::string> train_on;
  for (const YAML::Node& path : json["train_on"]) train_on.push_back(path.as<std::string>());
  std::vector<std::string> expected = budget_scenario_paths();
  expected.push_back(builtin_scenario_path("hetero32"));
  CHECK(train_on == expected);
  const Outcome unknown =
      dynamix("train --steps 16 --train-on budgets --out " + quoted(work / "unknown"));
  CHECK(unknown.status == 2);
  CHECK(unknown.stderr_text.find("--train-on") != std::string::npos);
  CHECK_FALSE(fs::exists(work.path() / "unknown"));
}

TEST_CASE("train with the same seed writes byte-identical checkpoint.pt and policy.pt") {
  TempDirectory work;
  for (const char* name : {"first", "second"}) {
    const Outcome run = dynamix(kTinyRun + " --seed 3 --out " + quoted(work / name));
    REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  }
  for (const char* file : {"checkpoint.pt", "policy.pt"}) {
    CAPTURE(file);
    CHECK(contents(work.path() / "first" / file) == contents(work.path() / "second" / file));
  }
  // Without --select-on, policy.pt is the final policy and nothing is judged.
  CHECK_FALSE(fs::exists(work.path() / "first" / "best_snapshot.pt"));
  CHECK_FALSE(fs::exists(work.path() / "first" / "last_policy.pt"));
}

TEST_CASE("train interrupted, then resumed, ends byte for byte where an uninterrupted run does") {
  TempDirectory work;
  // 16 updates of 4 environments, evaluated every 4: the interrupt lands mid-run, between
  // evaluations or after one, and the resume must replay its way back to the same state.
  const std::string command =
      "train --steps 4096 --envs 4 --rollout-steps 64 --eval-every 4 --eval-seeds 1 "
      "--checkpoint-every 1000 --seed 5 --quiet --out ";
  const Outcome whole = dynamix(command + quoted(work / "whole"));
  REQUIRE_MESSAGE(whole.status == 0, whole.stderr_text);

  // SIGTERM (a background job of sh ignores SIGINT) once the curve has three updates.
  const std::string curve = quoted(work / "split.partial/train_curve.csv");
  const std::string shell = quoted(DYNAMIX_BINARY) + " " + command + quoted(work / "split") +
                            " >/dev/null 2>" + quoted(work / "stderr.txt") + " & pid=$!; " +
                            "for i in $(seq 1000); do [ -f " + curve + " ] && [ $(wc -l < " +
                            curve + ") -ge 4 ] && break; sleep 0.02; done; kill -TERM $pid; " +
                            "wait $pid";
  const int raw = std::system(shell.c_str());
  REQUIRE(WEXITSTATUS(raw) == 130);
  CHECK(contents(work.path() / "stderr.txt").find("resume with: dynamix train") !=
        std::string::npos);
  const std::size_t done = read_csv(work.path() / "split.partial" / "train_curve.csv").rows.size();
  CHECK(done >= 3);
  CHECK(done < 16);

  // A curve that lost rows the checkpoint holds is refused, naming it, and left as it was.
  const fs::path curve_file = work.path() / "split.partial" / "train_curve.csv";
  const std::string whole_curve = contents(curve_file);
  const std::string truncated = whole_curve.substr(0, whole_curve.find('\n', 0) + 1);
  const auto write = [&](const std::string& text) {
    std::ofstream(curve_file, std::ios::binary | std::ios::trunc) << text;
  };
  write(truncated);
  const Outcome refused = dynamix(command + quoted(work / "split") + " --resume");
  CHECK(refused.status == 2);
  CHECK(refused.stderr_text.find("train_curve.csv: expected a row for each of the ") !=
        std::string::npos);
  CHECK(contents(curve_file) == truncated);
  write(whole_curve);

  const Outcome resumed = dynamix(command + quoted(work / "split") + " --resume");
  REQUIRE_MESSAGE(resumed.status == 0, resumed.stderr_text);
  for (const char* file : {"checkpoint.pt", "policy.pt", "run.json"}) {
    CAPTURE(file);
    CHECK(contents(work.path() / "whole" / file) == contents(work.path() / "split" / file));
  }
  // The curve too, but for the wall-clock column.
  const Csv expected = read_csv(work.path() / "whole" / "train_curve.csv");
  const Csv spliced = read_csv(work.path() / "split" / "train_curve.csv");
  REQUIRE(spliced.rows.size() == 16);
  REQUIRE(expected.rows.size() == 16);
  const std::size_t wall = expected.column("wall_s");
  for (std::size_t row = 0; row < expected.rows.size(); ++row) {
    for (std::size_t column = 0; column < expected.header.size(); ++column) {
      if (column == wall) continue;
      CAPTURE(row);
      CHECK(spliced.rows[row][column] == expected.rows[row][column]);
    }
  }
}

TEST_CASE("train --resume with other options or another scenario is refused naming what differs") {
  TempDirectory work;
  const Outcome run = dynamix(kTinyRun + " --seed 1 --out " + quoted(work / "train"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  // A finished run directory stands in for the one an interrupted run leaves.
  const fs::path partial = work.path() / "train.partial";
  fs::copy(work.path() / "train", partial);
  const std::string checkpoint = (partial / "checkpoint.pt").string();
  const std::string out = " --resume --out " + quoted(work / "train");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {kTinyRun + " --seed 2",
       ": --seed: expected '1' (this checkpoint's run on scenario 'quickstart'), found '2' (a "
       "resume repeats the run's options)"},
      {"train --steps 32 --envs 2 --rollout-steps 4 --eval-every 100 --set "
       "training.budget_epochs=1",
       ": --steps: expected '16'"},
      {kTinyRun + " --learning-rate 0.002", ": --learning-rate: expected '0.001'"},
      {kTinyRun + " --gamma 0.99", ": --gamma: expected '0.999'"},
      {"train --steps 16 --envs 2 --rollout-steps 4 --eval-every 100 --set "
       "training.budget_epochs=2",
       ": --set: expected 'resolved configuration "},
      {kTinyRun + " --scenario " + quoted((kSourceDir / "scenarios" / "lossy8.yaml").string()),
       ": --scenario: expected 'quickstart'"},
      // Every row a run records: the environment's, and train's own.
      {kTinyRun + " --actions 50 --actions 100 --actions 200", ": --actions: expected '"},
      {kTinyRun + " --eval-seeds 3", ": --eval-seeds: expected '5'"},
      {kTinyRun + " --select-on hetero32", ": --select-on: expected ''"},
  };
  for (const auto& refusal : cases) {
    const std::string& command = refusal.first;
    CAPTURE(command);
    const Outcome refused = dynamix(command + out);
    CHECK(refused.status == 2);
    std::string expected = "dynamix: ";
    expected += checkpoint;
    expected += refusal.second;
    CHECK(refused.stderr_text.starts_with(expected));
    CHECK(std::count(refused.stderr_text.begin(), refused.stderr_text.end(), '\n') == 1);
    CHECK(fs::exists(partial / "checkpoint.pt"));
  }

  {  // A corrupt train_curve.csv is named with its line.
    std::ofstream curve(partial / "train_curve.csv", std::ios::app);
    curve << "x7,1,2\n";
  }
  const std::size_t rows = read_csv(work.path() / "train" / "train_curve.csv").rows.size();
  const Outcome corrupt = dynamix(kTinyRun + " --seed 1" + out);
  CHECK(corrupt.status == 2);
  CHECK(corrupt.stderr_text == "dynamix: " + (partial / "train_curve.csv").string() + ":" +
                                   std::to_string(rows + 2) + ": update: expected " +
                                   std::to_string(rows + 1) + " (row k is update k), found 'x7'\n");

  {  // A curve that lost its last row no longer matches the checkpoint's updates.
    const std::string whole = contents(work.path() / "train" / "train_curve.csv");
    std::ofstream(partial / "train_curve.csv", std::ios::binary)
        << whole.substr(0, whole.rfind('\n', whole.size() - 2) + 1);
  }
  const Outcome truncated = dynamix(kTinyRun + " --seed 1" + out);
  CHECK(truncated.status == 2);
  CHECK(truncated.stderr_text == "dynamix: " + (partial / "train_curve.csv").string() +
                                     ": expected a row for each of the " + std::to_string(rows) +
                                     " updates the checkpoint holds, found " +
                                     std::to_string(rows - 1) + " rows\n");
  fs::remove(partial / "train_curve.csv");
  const Outcome missing = dynamix(kTinyRun + " --seed 1" + out);
  CHECK(missing.status == 2);
  CHECK(missing.stderr_text.ends_with("updates the checkpoint holds, found no file\n"));

  fs::copy_file(work.path() / "train" / "train_curve.csv", partial / "train_curve.csv",
                fs::copy_options::overwrite_existing);
  const Outcome resumed = dynamix(kTinyRun + " --seed 1" + out);
  CHECK_MESSAGE(resumed.status == 0, resumed.stderr_text);
  CHECK(read_csv(work.path() / "train" / "train_curve.csv").rows.size() == rows);
}

TEST_CASE("train refuses an unknown action base with status 2, naming both") {
  TempDirectory work;
  const Outcome refused =
      dynamix("train --action-base sideways --steps 100 --out " + quoted(work / "train"));
  CHECK(refused.status == 2);
  CHECK(refused.stderr_text ==
        "dynamix: --action-base: expected one of current, balanced, global, noise, goodput, "
        "goodput-steady, rule, found 'sideways'\n");
  CHECK_FALSE(fs::exists(work.path() / "train"));
}

TEST_CASE("train takes its own action set, once per --actions, and refuses one its base cannot") {
  TempDirectory work;
  const std::string base = "train --steps 64 --envs 1 --rollout-steps 64 --eval-every 1000 ";
  const Outcome refused =
      dynamix(base + "--actions 0 --actions 100 --out " + quoted(work / "refused"));
  CHECK(refused.status == 2);
  CHECK(refused.stderr_text ==
        "dynamix: --actions: expected percentages of the goodput-optimal batch above 0, found 0\n");
  CHECK_FALSE(fs::exists(work.path() / "refused"));
  const Outcome wide =
      dynamix(base + "--actions 50 --actions 100 --actions 400 --out " + quoted(work / "wide"));
  REQUIRE_MESSAGE(wide.status == 0, wide.stderr_text);
  const YAML::Node run = YAML::LoadFile((work.path() / "wide" / "run.json").string());
  CHECK(run["environment"]["actions"].as<std::vector<int>>() == std::vector<int>{50, 100, 400});
  // evaluate runs it with its own action set, as with its own k.
  const Outcome evaluated = dynamix(
      "evaluate --seeds 1 --policies ppo:" + quoted((work.path() / "wide" / "policy.pt").string()) +
      " --out " + quoted(work / "evaluated"));
  CHECK_MESSAGE(evaluated.status == 0, evaluated.stderr_text);
}

TEST_CASE("train's progress in a file is plain lines ending in the last update; --quiet has none") {
  TempDirectory work;
  const std::string command = "train --steps 128 --envs 1 --rollout-steps 64 --eval-every 1000 ";
  const Outcome logged = dynamix(command + "--out " + quoted(work / "a"));
  REQUIRE(logged.status == 0);
  CAPTURE(logged.stderr_text);
  CHECK(logged.stderr_text.find('\r') == std::string::npos);
  CHECK(logged.stderr_text.starts_with("[100%] update 2 | "));
  CHECK(std::count(logged.stderr_text.begin(), logged.stderr_text.end(), '\n') == 1);
  const Outcome quiet = dynamix(command + "--quiet --out " + quoted(work / "b"));
  REQUIRE(quiet.status == 0);
  CHECK(quiet.stderr_text.empty());
}

TEST_CASE("train takes a built-in scenario by its short name") {
  TempDirectory work;
  REQUIRE(dynamix("train --scenario hetero32 --steps 64 --envs 1 --rollout-steps 64 "
                  "--eval-every 1000 --quiet --out " +
                  quoted(work / "run"))
              .status == 0);
  const std::string run = contents(work.path() / "run" / "run.json");
  CHECK(run.find("\"name\": \"hetero32\"") != std::string::npos);
}

TEST_CASE("train --help shows its defaults as they were written") {
  const Outcome help = dynamix("train --help");
  REQUIRE(help.status == 0);
  for (const std::string shown :
       {"--learning-rate arg (=0.001)", "--gae-lambda arg (=0.95)", "--gamma arg (=0.999)",
        "--entropy-coef arg (=0.01)", "--initial-hold arg (=0.5)", "--quiet"}) {
    CAPTURE(shown);
    CHECK(help.stdout_text.find(shown) != std::string::npos);
  }
  CHECK(help.stdout_text.find("0.00099") == std::string::npos);
  CHECK(help.stdout_text.find("0.9499") == std::string::npos);
}

TEST_CASE("train selects the same snapshot with the same scores on 1 and 2 threads") {
  TempDirectory work;
  const std::string train =
      "train --randomize --steps 1024 --envs 4 --rollout-steps 64 --eval-every 2 --seed 2 "
      "--eval-seeds 3 --select-on embedded:/scenarios/validation/v4_extreme.yaml "
      "--select-on embedded:/scenarios/validation/v16_lossy.yaml -q";
  for (const char* threads : {"1", "2"}) {
    const Outcome outcome =
        dynamix(train + " --threads " + threads + " --out " + quoted(work / threads));
    REQUIRE_MESSAGE(outcome.status == 0, outcome.stderr_text);
  }
  CHECK(contents(work.path() / "1" / "policy.pt") == contents(work.path() / "2" / "policy.pt"));
  const Csv one = read_csv(work.path() / "1" / "train_curve.csv");
  const Csv two = read_csv(work.path() / "2" / "train_curve.csv");
  const std::size_t score = one.column("selection_score");
  REQUIRE(one.rows.size() == two.rows.size());
  for (std::size_t r = 0; r < one.rows.size(); ++r) CHECK(one.rows[r][score] == two.rows[r][score]);
  CHECK_FALSE(one.rows.back()[score].empty());
}

#ifdef DYNAMIX_MPI
TEST_CASE("mpirun -n 2 dynamix train writes the policy.pt and curve of one process") {
  if (!have_mpirun()) {
    MESSAGE("skipped: no mpirun on PATH (Debian: apt-get install openmpi-bin)");
    return;
  }
  TempDirectory work;
  // 5 environments: rank 0 steps 2 of them, rank 1 three.
  const std::string train =
      "train --randomize --steps 1280 --envs 5 --rollout-steps 64 --eval-every 2 --seed 4 -q";
  REQUIRE(dynamix(train + " --out " + quoted(work / "one")).status == 0);
  const Outcome spread = dynamix_over_mpi(train + " --threads 1 --out " + quoted(work / "ranks"));
  REQUIRE_MESSAGE(spread.status == 0, spread.stderr_text);
  CHECK(contents(work.path() / "one" / "policy.pt") ==
        contents(work.path() / "ranks" / "policy.pt"));
  CHECK(contents(work.path() / "one" / "checkpoint.pt") ==
        contents(work.path() / "ranks" / "checkpoint.pt"));
  // The curves agree but for their wall-clock column.
  const Csv one = read_csv(work.path() / "one" / "train_curve.csv");
  const Csv ranks = read_csv(work.path() / "ranks" / "train_curve.csv");
  REQUIRE(one.rows.size() == ranks.rows.size());
  const std::size_t wall = one.column("wall_s");
  for (std::size_t r = 0; r < one.rows.size(); ++r) {
    std::vector<std::string> a = one.rows[r], b = ranks.rows[r];
    a[wall] = b[wall] = "";
    CHECK(a == b);
  }
}

TEST_CASE("mpirun -n 2 dynamix train refuses bad input on rank 0 with status 2, no rank hangs") {
  if (!have_mpirun()) return;
  TempDirectory work;
  const Outcome option =
      dynamix_over_mpi("train --steps 100 --gamma 2 --out " + quoted(work / "bad"));
  CHECK(option.status == 2);
  CHECK(option.stderr_text.find("--gamma") != std::string::npos);
  CHECK(fs::is_empty(work.path()));
  // Rank 0 alone finds that --out is not its to write; the other rank must not wait for it.
  fs::create_directory(work.path() / "theirs");
  std::ofstream(work.path() / "theirs" / "notes.txt") << "kept";
  const Outcome out = dynamix_over_mpi("train --steps 100 --out " + quoted(work / "theirs"));
  CHECK(out.status == 2);
  CHECK(out.stderr_text.find("--out") != std::string::npos);
  CHECK(contents(work.path() / "theirs" / "notes.txt") == "kept");
}
#endif

}  // namespace
}  // namespace dynamix
