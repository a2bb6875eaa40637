// Evaluation protocol: episodes of each policy on each scenario over seeds, summarized so that
// a miss never ranks as fast (docs/evaluation.md).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gym/batch_size_env.h"
#include "gym/episode_log.h"
#include "policies/policy.h"

namespace dynamix {

/// Per-worker batch every adaptive policy starts from in `dynamix evaluate` unless
/// --initial-batch says otherwise (static and schedule policies start at their own).
inline constexpr int kEvaluationInitialBatch = 64;

/// One row of results.csv.
struct EpisodeResult {
  std::string scenario;
  /// The policy's label in reports (its name unless the evaluation gave another).
  std::string policy;
  PolicyKind kind = PolicyKind::kOther;
  std::uint64_t seed = 0;
  /// False when the policy needs a batch that memory or the batch bounds cannot hold (a
  /// static:B too big for some worker); nothing else is then meaningful.
  bool feasible = true;
  /// Simulated seconds until validation accuracy first reached the target; none if never.
  std::optional<double> time_to_target_s;
  /// Validation accuracy when the budget ran out.
  double final_accuracy = 0;
  double total_time_s = 0;
  /// Epochs run when the episode ended.
  double epochs = 0;
  /// Simulator events the episode fired.
  std::uint64_t events = 0;
  /// The scenario's training.budget_time_s; 0 when it sets none.
  double time_budget_s = 0;
  /// The latest the scenario's budgets can end a run, from the scenario alone (BatchSizeEnv's
  /// miss time: its epochs at the smallest batches, its iterations, its time); 0 without any.
  double miss_time_s = 0;
  /// Mean per-worker batch over the episode's iterations.
  double mean_batch_size = 0;
  /// Smallest and largest global batch in force after a decision (the starting one included).
  int min_global_batch = 0;
  int max_global_batch = 0;
  /// Mean over decisions of |ΔG| / G, the relative move of the global batch.
  double global_batch_change = 0;
  /// Share of worker decisions that leave the policy's default: a non-hold action for a policy
  /// that picks from the action set, a changed batch for one that sets batches directly.
  double departure_share = 0;
  /// Σ over decisions of the mean reward over workers.
  double episode_return = 0;
  std::int64_t decisions = 0;
  /// For a policy that picks rules (Policy::last_rule): the decisions each rule decided, in the
  /// order the rules were first picked.
  std::vector<std::pair<std::string, std::int64_t>> rule_choices = {};
};

/// Runs `policy` in `env` from reset(seed) until the episode ends (at the budget, or at the
/// target when EnvOptions::stop_at_target). Each decision goes to `log` if given, with the
/// batches the policy requested and the action indices it took (none for policies that set
/// batches directly). A static policy whose batch the environment had to clamp at reset is not
/// run: the result says infeasible.
EpisodeResult run_episode(BatchSizeEnv& env, Policy& policy, std::uint64_t seed,
                          DecisionLog* log = nullptr);

/// A mean with a 95% percentile-bootstrap confidence interval.
struct Interval {
  double mean = 0;
  double low = 0;
  double high = 0;
};
Interval bootstrap_mean(std::span<const double> values, std::uint64_t seed, int resamples = 2000);

/// What one policy did on one scenario over its seeds, and where it ranks.
struct PolicyScore {
  std::string policy;
  PolicyKind kind = PolicyKind::kOther;
  int seeds = 0;
  int reached = 0;
  bool feasible = true;
  /// Mean time to target when every seed reached it; the scenario's penalty time otherwise.
  double score_s = 0;
  /// Over the seeds that reached the target (empty interval when none did).
  Interval time_to_target;
  Interval final_accuracy;
  Interval mean_batch_size;
  int min_global_batch = 0;
  int max_global_batch = 0;
  double global_batch_change = 0;
  double departure_share = 0;
  bool reached_all() const { return feasible && reached == seeds; }
};

/// One scenario's scores in the order the policies were given, with its references.
struct ScenarioScores {
  std::string scenario;
  /// What a miss or an infeasible policy counts as: the scenario's training.budget_time_s, or
  /// else the latest its budgets can end a run (EpisodeResult::miss_time_s, the scenario's
  /// alone), or the longest episode of any policy there for a scenario without any budget.
  double penalty_s = 0;
  std::vector<PolicyScore> policies;
  /// Indices into `policies`: the fastest static batch and the fastest heuristic among those
  /// that reached the target on every seed; the oracle's row if there is one.
  std::optional<std::size_t> best_static;
  std::optional<std::size_t> best_heuristic;
  std::optional<std::size_t> oracle;
  /// 1-based rank of each policy: every seed reached first, then by score.
  std::vector<int> ranks;
};

/// Groups results by scenario and policy (each in first-seen order) and scores them.
std::vector<ScenarioScores> score_results(const std::vector<EpisodeResult>& results);

void write_results_csv(std::ostream& out, const std::vector<EpisodeResult>& results);
/// A Markdown table per scenario and the geometric mean of each policy's ratios to the best
/// static batch across the scenarios that have one (docs/evaluation.md).
void write_summary_markdown(std::ostream& out, const std::vector<EpisodeResult>& results);
/// Whether any result picked rules (EpisodeResult::rule_choices).
bool has_rule_choices(const std::vector<EpisodeResult>& results);
/// What the policies that pick rules chose: per scenario and policy, each rule's share of the
/// decisions over every seed, as a Markdown table.
void write_rule_choices_markdown(std::ostream& out, const std::vector<EpisodeResult>& results);
/// rule_choices.csv: scenario, policy, seed, rule, decisions, one row per rule an episode picked.
void write_rule_choices_csv(std::ostream& out, const std::vector<EpisodeResult>& results);

/// An episode's outcome as text for the trip from another rank, every number exact; its
/// scenario, label and oracle kind come from the task it ran.
std::string episode_record(const EpisodeResult& r);

/// The EpisodeResult episode_record() wrote (its scenario, label and oracle kind left empty).
/// A record it did not write is a failed check.
EpisodeResult parse_episode_record(const std::string& text);

}  // namespace dynamix
