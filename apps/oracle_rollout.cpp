// The hindsight rollouts of `dynamix oracle --rollout`.
#include "apps/oracle_rollout.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>

#include "gym/env_knobs.h"
#include "gym/rules.h"
#include "policies/baselines/baselines.h"
#include "sim/io/json_writer.h"
#include "studies/evaluation.h"
#include "studies/oracle.h"
#include "studies/progress.h"
#include "studies/rollout.h"

namespace dynamix {
namespace {

/// "i:R" for each decision i (from 0) that left the base, joined by spaces; R a percentage, or a
/// rule's name where `rules`.
std::string departures(const std::vector<int>& choices, int base, bool rules) {
  std::string text;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (choices[i] == base) continue;
    if (!text.empty()) text += ' ';
    text += std::to_string(i);
    text += ':';
    text += rules ? std::string(kSelectableRules[static_cast<std::size_t>(choices[i])])
                  : std::to_string(choices[i]);
  }
  return text;
}

/// Mean of the seeds' times when every one is set, else nullopt.
std::optional<double> mean_if_all(const std::vector<std::optional<double>>& times) {
  double sum = 0;
  for (const std::optional<double>& time : times) {
    if (!time) return std::nullopt;
    sum += *time;
  }
  return times.empty() ? std::nullopt : std::optional(sum / static_cast<double>(times.size()));
}

/// One scenario's rollout: the base's mean time, the searched one's, and the decisions changed.
struct RolloutRow {
  std::optional<double> base_s;
  std::optional<double> rollout_s;
  std::size_t changed = 0;
  std::size_t decisions = 0;
};

RolloutRow write_rollout_rows(std::ostream& csv, const std::string& scenario, int base, bool rules,
                              const std::vector<RolloutOutcome>& outcomes) {
  std::vector<std::optional<double>> base_times, searched;
  RolloutRow row;
  for (const RolloutOutcome& o : outcomes) {
    const auto changes = static_cast<std::size_t>(std::count_if(
        o.choices.begin(), o.choices.end(), [&](int choice) { return choice != base; }));
    csv << scenario << ',' << o.seed << ','
        << (rules ? std::string(kSelectableRules[static_cast<std::size_t>(base)]) + "," : "")
        << (o.base_time_s ? format_number(*o.base_time_s) : "") << ','
        << (o.time_s ? format_number(*o.time_s) : "") << ',' << o.decisions << ',' << changes << ','
        << o.episodes << ',' << departures(o.choices, base, rules) << '\n';
    base_times.push_back(o.base_time_s);
    searched.push_back(o.time_s);
    row.changed += changes;
    row.decisions += static_cast<std::size_t>(o.decisions);
  }
  row.base_s = mean_if_all(base_times);
  row.rollout_s = mean_if_all(searched);
  return row;
}

std::string time_text(std::optional<double> seconds) {
  return seconds ? format_rounded(*seconds) : "miss";
}

/// hindsight_rollout on `scenario` over the oracle's seeds, its progress on stderr.
std::vector<RolloutOutcome> rollout_seeds(const OracleArgs& a,
                                          const std::shared_ptr<const Scenario>& scenario,
                                          const EnvOptions& env, const RolloutOptions& options) {
  Progress progress(std::cerr, {.style = stderr_progress_style(a.quiet)});
  std::vector<RolloutOutcome> outcomes =
      hindsight_rollout(scenario, env, static_cast<std::uint64_t>(a.first_seed), a.seeds, options,
                        [&](int seed, int episodes) {
                          progress.update(static_cast<double>(seed - 1) / a.seeds,
                                          scenario->name + " seed " + std::to_string(seed) + ", " +
                                              std::to_string(episodes) + " episodes");
                        });
  progress.finish();
  return outcomes;
}

/// Each selectable rule's mean time to target on the seeds, as evaluate runs it (nullopt where a
/// seed missed), and the longest episode any of them ran (what a miss counts as).
struct RuleTimes {
  std::vector<std::optional<double>> mean_s;
  double longest_s = 0;
};

RuleTimes rule_times(const std::shared_ptr<const Scenario>& scenario, EnvOptions env,
                     const OracleArgs& a, const IterationObserver& observer) {
  env.stop_at_target = true;
  const std::size_t rules = kSelectableRules.size();
  const auto seeds = static_cast<std::size_t>(a.seeds);
  std::vector<EpisodeResult> results(rules * seeds);
  parallel_for(static_cast<int>(results.size()), a.jobs, [&](int k) {
    const auto i = static_cast<std::size_t>(k);
    const std::uint64_t seed = static_cast<std::uint64_t>(a.first_seed) + i % seeds;
    BatchSizeEnv batch_env(std::make_shared<FixedScenario>(scenario), env);
    batch_env.set_iteration_observer(observer);
    const std::unique_ptr<Policy> policy =
        make_baseline(std::string(kSelectableRules[i / seeds]), seed);
    results[i] = run_episode(batch_env, *policy, seed);
  });
  RuleTimes times;
  for (std::size_t r = 0; r < rules; ++r) {
    std::vector<std::optional<double>> seed_times;
    for (std::size_t s = 0; s < seeds; ++s) {
      const EpisodeResult& result = results[r * seeds + s];
      seed_times.push_back(result.time_to_target_s);
      times.longest_s = std::max(times.longest_s, result.total_time_s);
    }
    times.mean_s.push_back(mean_if_all(seed_times));
  }
  return times;
}

/// The rollout's and each rule's time over the per-scenario best rule's, as geometric means over
/// the scenarios.
class RuleHeadroom {
 public:
  void add(const RuleTimes& times, double best_s, double rollout_s) {
    ++scenarios_;
    rollout_log_ += std::log(rollout_s / best_s);
    for (std::size_t r = 0; r < rule_logs_.size(); ++r) {
      rule_logs_[r] += std::log(times.mean_s[r].value_or(times.longest_s) / best_s);
    }
  }

  /// The closing lines of the summary; nothing without a scenario.
  void write(std::ostream& markdown) const {
    if (scenarios_ == 0) return;
    const auto single = static_cast<std::size_t>(
        std::min_element(rule_logs_.begin(), rule_logs_.end()) - rule_logs_.begin());
    const double rollout = std::exp(rollout_log_ / scenarios_);
    const double best_single = std::exp(rule_logs_[single] / scenarios_);
    markdown << "\nGeometric means over the " << scenarios_
             << " scenarios, of the time to target over the per-scenario best rule's: the rollout "
             << format_rounded(rollout) << "; the best single rule, `" << kSelectableRules[single]
             << "`, " << format_rounded(best_single)
             << " (a miss counts as the longest episode any rule ran there). The rollout against "
                "the best single rule: "
             << format_rounded(rollout / best_single) << ".\n";
  }

 private:
  std::vector<double> rule_logs_ = std::vector<double>(kSelectableRules.size(), 0.0);
  double rollout_log_ = 0;
  int scenarios_ = 0;
};

}  // namespace

void write_rollouts(const OracleArgs& a,
                    const std::vector<std::shared_ptr<const Scenario>>& scenarios,
                    const IterationObserver& observer, std::ostream& csv, std::ostream& markdown) {
  csv << "scenario,seed,goodput100_time_to_target_s,rollout_time_to_target_s,decisions,"
         "changed_decisions,episodes,changes\n";
  RolloutOptions options;
  std::string percents;
  for (int percent : options.percents) {
    percents += (percents.empty() ? "" : ", ") + std::to_string(percent);
  }
  markdown << "# Oracle: hindsight rollout\n\nOn each of " << a.seeds
           << " seeds, goodput:R's R chosen for each block of " << a.rollout_block
           << " decisions in turn (from " << percents
           << ") by replaying the seed to the target after each candidate, starting from "
              "goodput:100 (studies/rollout.h). Mean time to target over the seeds.\n\n"
           << "| scenario | goodput:100 (s) | rollout (s) | ratio | decisions changed |\n"
           << "|---|---|---|---|---|\n";
  EnvOptions env = a.env_options;
  env.initial_batch = kEvaluationInitialBatch;
  options.jobs = a.jobs;
  options.block = a.rollout_block;
  options.observer = observer;
  for (const auto& scenario : scenarios) {
    const std::vector<RolloutOutcome> outcomes = rollout_seeds(a, scenario, env, options);
    const RolloutRow row =
        write_rollout_rows(csv, scenario->name, kRolloutBasePercent, false, outcomes);
    markdown << "| " << scenario->name << " | " << time_text(row.base_s) << " | "
             << time_text(row.rollout_s) << " | "
             << (row.base_s && row.rollout_s ? format_rounded(*row.rollout_s / *row.base_s) : "")
             << " | " << row.changed << " of " << row.decisions << " |\n";
  }
}

/// --rollout --rollout-rules: per scenario, the rules alone, then the rollout over which rule
/// decides each block, from the per-scenario best rule; the headroom over it and over the best
/// single rule across the scenarios.
void write_rule_rollouts(const OracleArgs& a,
                         const std::vector<std::shared_ptr<const Scenario>>& scenarios,
                         const IterationObserver& observer, std::ostream& csv,
                         std::ostream& markdown) {
  csv << "scenario,seed,base_rule,base_time_to_target_s,rollout_time_to_target_s,decisions,"
         "changed_decisions,episodes,changes\n";
  markdown << "# Oracle: hindsight rollout over rules\n\nOn each of " << a.seeds
           << " seeds, the rule that decides each block of " << a.rollout_block
           << " decisions in turn (any of the rule action base's: gym/rules.h) chosen by "
              "replaying the seed to the target after each candidate, starting from the "
              "per-scenario best rule (the fastest that reached on every seed; "
              "studies/rollout.h). Mean time to target over the seeds.\n\n"
           << "| scenario | best rule | best rule (s) | rollout (s) | ratio | decisions changed |\n"
           << "|---|---|---|---|---|---|\n";
  EnvOptions env = a.env_options;
  env.initial_batch = kEvaluationInitialBatch;
  RolloutOptions options;
  options.rules = default_actions(ActionBase::kRule);
  options.jobs = a.jobs;
  options.block = a.rollout_block;
  options.observer = observer;
  const std::size_t rules = kSelectableRules.size();
  RuleHeadroom headroom;
  for (const auto& scenario : scenarios) {
    const RuleTimes times = rule_times(scenario, env, a, observer);
    std::optional<std::size_t> best;
    for (std::size_t r = 0; r < rules; ++r) {
      if (times.mean_s[r] && (!best || *times.mean_s[r] < *times.mean_s[*best])) best = r;
    }
    if (!best) {
      markdown << "| " << scenario->name << " | none reached on every seed | | | | |\n";
      continue;
    }
    options.base_rule = static_cast<int>(*best);
    const std::vector<RolloutOutcome> outcomes = rollout_seeds(a, scenario, env, options);
    const RolloutRow row =
        write_rollout_rows(csv, scenario->name, options.base_rule, true, outcomes);
    const double best_s = *times.mean_s[*best];
    markdown << "| " << scenario->name << " | `" << kSelectableRules[*best] << "` | "
             << format_rounded(best_s) << " | " << time_text(row.rollout_s) << " | "
             << (row.rollout_s ? format_rounded(*row.rollout_s / best_s) : "") << " | "
             << row.changed << " of " << row.decisions << " |\n";
    if (row.rollout_s) headroom.add(times, best_s, *row.rollout_s);
  }
  headroom.write(markdown);
}

}  // namespace dynamix
