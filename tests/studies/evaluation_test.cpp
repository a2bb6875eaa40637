// Evaluation statistics, reach-aware scores and the summary table.
#include "studies/evaluation.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <tuple>

#include "gym/env_knobs.h"
#include "gym/scenario_source.h"
#include "policies/baselines/baselines.h"
#include "sim/scenario/scenario_names.h"

namespace dynamix {
namespace {

TEST_CASE("results.csv quotes a label with a comma, a quote or a line break") {
  EpisodeResult result;
  result.scenario = "quick,start";
  result.policy = "my \"policy\"\nsecond line";
  std::ostringstream out;
  write_results_csv(out, {result});
  const std::string text = out.str();
  CHECK(text.find("\"quick,start\",\"my \"\"policy\"\"\nsecond line\",") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 3);  // header, a record holding one break
}

TEST_CASE("bootstrap_mean brackets the mean and collapses for identical values") {
  const std::vector<double> values = {10, 12, 9, 11, 13, 8, 10};
  const Interval interval = bootstrap_mean(values, 1);
  CHECK(interval.mean == doctest::Approx(73.0 / 7));
  CHECK(interval.low < interval.mean);
  CHECK(interval.high > interval.mean);
  CHECK(interval.low > 8);
  CHECK(interval.high < 13);
  const std::vector<double> same = {5, 5, 5};
  const Interval flat = bootstrap_mean(same, 1);
  CHECK(flat.low == 5);
  CHECK(flat.high == 5);
}

/// Results built by hand: scenario, policy, kind, per-seed times (none: a miss).
class Results {
 public:
  void add(const char* scenario, const char* policy, PolicyKind kind,
           const std::vector<std::optional<double>>& times, bool feasible = true) {
    std::uint64_t seed = 1;
    for (const auto& time : times) {
      EpisodeResult r;
      r.scenario = scenario;
      r.policy = policy;
      r.kind = kind;
      r.seed = seed++;
      r.feasible = feasible;
      r.time_to_target_s = time;
      r.total_time_s = time.value_or(90);
      r.time_budget_s = 500;
      r.final_accuracy = 0.9;
      results_.push_back(r);
    }
  }
  const std::vector<EpisodeResult>& all() const { return results_; }
  std::string summary() const {
    std::ostringstream out;
    write_summary_markdown(out, results_);
    return out.str();
  }

 private:
  std::vector<EpisodeResult> results_;
};

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("Without a time budget a miss scores the scenario's own miss time, whoever else ran") {
  // The same goodput:100 episodes, evaluated beside a slow policy and beside a fast one: its
  // miss scores the same in both tables (it scored the longest episode of the company before).
  const auto penalty_beside = [](std::optional<double> other_time, double other_total) {
    std::vector<EpisodeResult> results;
    for (const auto& [policy, time, total] :
         {std::tuple{"goodput:100", std::optional<double>{}, 300.0},
          std::tuple{"static:64", other_time, other_total}}) {
      EpisodeResult r;
      r.scenario = "a";
      r.policy = policy;
      r.kind = PolicyKind::kStatic;
      r.time_to_target_s = time;
      r.total_time_s = total;
      r.miss_time_s = 2400;  // the scenario's epochs at its smallest batches
      results.push_back(r);
    }
    return score_results(results).front().policies.front().score_s;
  };
  CHECK(penalty_beside(100.0, 100.0) == 2400);
  CHECK(penalty_beside(std::nullopt, 1900) == 2400);
}

TEST_CASE("A miss never ranks as fast: it ranks after every reacher and scores the budget") {
  Results r;
  r.add("a", "static:64", PolicyKind::kStatic, {200.0, 200.0});
  r.add("a", "static:512", PolicyKind::kStatic, {50.0, std::nullopt});  // fast, but misses once
  r.add("a", "goodput", PolicyKind::kHeuristic, {160.0, 160.0});
  r.add("a", "ppo", PolicyKind::kLearned, {std::nullopt, std::nullopt});
  const std::vector<ScenarioScores> scores = score_results(r.all());
  REQUIRE(scores.size() == 1);
  const ScenarioScores& a = scores[0];
  REQUIRE(a.best_static);
  CHECK(a.policies[*a.best_static].policy == "static:64");
  CHECK(a.policies[*a.best_heuristic].policy == "goodput");
  CHECK(a.penalty_s == 500);
  CHECK(a.ranks == std::vector<int>{2, 3, 1, 3});
  CHECK(a.policies[1].score_s == 500);
  const std::string text = r.summary();
  CHECK(has(text, "Best static batch: static:64. Best heuristic: goodput."));
  CHECK(has(text,
            "| 3 | static:512 | miss 1/2 | 50.0 [50.0, 50.0] | 0.9000 [0.9000, 0.9000] | "
            "2.500 | 3.125 |"));
  CHECK(has(text, "| 3 | ppo | miss 2/2 | never |"));
  CHECK(has(text,
            "| 1 | goodput | 2/2 | 160.0 [160.0, 160.0] | 0.9000 [0.9000, 0.9000] | "
            "0.800 | 1.000 |"));
}

TEST_CASE("The geometric mean counts misses at the budget and skips scenarios no static reached") {
  Results r;
  r.add("a", "static:64", PolicyKind::kStatic, {100.0});
  r.add("a", "ppo", PolicyKind::kLearned, {80.0});
  r.add("b", "static:64", PolicyKind::kStatic, {50.0});
  r.add("b", "ppo", PolicyKind::kLearned, {std::nullopt});  // counts as 500 / 50 = 10
  r.add("c", "static:64", PolicyKind::kStatic, {std::nullopt});
  r.add("c", "ppo", PolicyKind::kLearned, {10.0});
  const std::string text = r.summary();
  CHECK(has(text, "over the 2 scenario(s)"));
  CHECK(has(text, "| ppo | 2.828 | 1 |"));  // sqrt(0.8 * 10)
  CHECK(has(text, "Best static batch: none reached the target on every seed"));
}

TEST_CASE("An infeasible static batch is reported as such and never becomes the best static") {
  Results r;
  r.add("a", "static:64", PolicyKind::kStatic, {100.0});
  r.add("a", "static:4096", PolicyKind::kStatic, {std::nullopt}, false);
  const ScenarioScores scores = score_results(r.all()).front();
  CHECK(scores.policies[*scores.best_static].policy == "static:64");
  CHECK(has(r.summary(), "| 2 | static:4096 | infeasible |"));
}

TEST_CASE("The oracle's headroom is the share of the heuristic-to-oracle gap a policy closes") {
  Results r;
  r.add("a", "static:64", PolicyKind::kStatic, {200.0});
  r.add("a", "goodput", PolicyKind::kHeuristic, {150.0});
  r.add("a", "ppo", PolicyKind::kLearned, {125.0});
  r.add("a", "oracle", PolicyKind::kOracle, {100.0});
  const std::string text = r.summary();
  CHECK(has(text,
            "| 2 | ppo | 1/1 | 125.0 [125.0, 125.0] | 0.9000 [0.9000, 0.9000] | 0.625 | "
            "0.833 | 50% |"));
  CHECK(has(text, "| 1 | oracle |"));
  CHECK(has(text,
            "| 4 | static:64 | 1/1 | 200.0 [200.0, 200.0] | 0.9000 [0.9000, 0.9000] | "
            "1.000 | 1.333 | <0% |"));
}

std::shared_ptr<const ScenarioSource> quickstart(const std::vector<std::string>& overrides) {
  return std::make_shared<FixedScenario>(
      std::make_shared<const Scenario>(load_scenario(kDefaultScenario, overrides)));
}

TEST_CASE("run_episode refuses to run a static batch memory cannot hold, and counts departures") {
  BatchSizeEnv env(
      quickstart({"training.budget_epochs=1"}),
      {.decision_interval = 10, .action_base = ActionBase::kBalanced, .max_batch = 100000});
  StaticPolicy huge(60000);
  const EpisodeResult refused = run_episode(env, huge, 1);
  CHECK_FALSE(refused.feasible);
  CHECK(refused.decisions == 0);

  StaticPolicy steady(64);
  const EpisodeResult held = run_episode(env, steady, 1);
  CHECK(held.feasible);
  CHECK(held.departure_share == 0);
  CHECK(held.global_batch_change == 0);
  CHECK(held.min_global_batch == 64 * 8);
  CHECK(held.max_global_batch == 64 * 8);

  SchedulePolicy growing({{0, 64}, {0.3, 128}});
  const EpisodeResult grown = run_episode(env, growing, 1);
  CHECK(grown.min_global_batch <= 64 * 8 + 8);
  CHECK(grown.max_global_batch >= 128 * 8 - 8);
  CHECK(grown.departure_share > 0);
}

TEST_CASE("An episode's record for another rank gives back every number exactly") {
  EpisodeResult result;
  result.kind = PolicyKind::kHeuristic;
  result.seed = 1234567890123ULL;
  result.feasible = true;
  result.time_to_target_s = 0.1 + 0.2;
  result.final_accuracy = 1.0 / 3.0;
  result.total_time_s = 1e300;
  result.epochs = 5e-324;
  result.miss_time_s = 400;
  result.episode_return = -2.5;
  result.events = 1ULL << 60;
  result.min_global_batch = 64;
  result.max_global_batch = 4096;
  result.decisions = 357;
  result.rule_choices = {{"goodput:100", 300}, {"goodput+straggler", 57}};
  const EpisodeResult back = parse_episode_record(episode_record(result));
  CHECK(back.kind == result.kind);
  CHECK(back.seed == result.seed);
  CHECK(back.time_to_target_s == result.time_to_target_s);
  CHECK(back.final_accuracy == result.final_accuracy);
  CHECK(back.total_time_s == result.total_time_s);
  CHECK(back.epochs == result.epochs);
  CHECK(back.miss_time_s == result.miss_time_s);
  CHECK(back.episode_return == result.episode_return);
  CHECK(back.events == result.events);
  CHECK(back.max_global_batch == result.max_global_batch);
  CHECK(back.decisions == result.decisions);
  CHECK(back.rule_choices == result.rule_choices);
  result.time_to_target_s.reset();
  result.feasible = false;
  const EpisodeResult missed = parse_episode_record(episode_record(result));
  CHECK_FALSE(missed.time_to_target_s.has_value());
  CHECK_FALSE(missed.feasible);
}

TEST_CASE(
    "The epoch-budget training clusters: the goodput optimum reaches on each, a batch grown past "
    "it "
    "runs out of epochs on most") {
  // What `train --train-on budget` is for: a policy that grows the batch there is charged a miss.
  const std::vector<std::string> paths = budget_scenario_paths();
  REQUIRE(paths.size() == 6);
  int epoch_misses = 0;
  for (const std::string& path : paths) {
    CAPTURE(path);
    const Scenario scenario = load_scenario(path);
    CHECK(scenario.training.budget_epochs.has_value());
    CHECK(scenario.colocated_jobs.empty());
    EnvOptions options = evaluation_env_options();
    options.initial_batch = kEvaluationInitialBatch;
    BatchSizeEnv env(std::make_shared<FixedScenario>(std::make_shared<const Scenario>(scenario)),
                     options);
    const auto optimum = make_baseline("goodput:100", 1);
    CHECK(run_episode(env, *optimum, 1).time_to_target_s.has_value());
    const auto proportional = make_baseline("proportional", 1);
    const EpisodeResult grown = run_episode(env, *proportional, 1);
    if (grown.time_to_target_s) continue;
    // The epochs ran out, not the time.
    CHECK(grown.epochs >= *scenario.training.budget_epochs - 1);
    CHECK(grown.total_time_s < *scenario.training.budget_time_s);
    ++epoch_misses;
  }
  CHECK(epoch_misses >= 3);
}

}  // namespace
}  // namespace dynamix
