// `dynamix evaluate`'s options table.
#include "apps/evaluate_options.h"

#include <algorithm>
#include <thread>

#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "apps/policy_factory.h"
#include "gym/env_knobs.h"
#include "studies/evaluation.h"

namespace dynamix {

namespace {

using Rows = KnobRows<EvaluateOptions, ExactNumbers>;
using Row = Knob<EvaluateOptions>;

constexpr int kMaxFamily = 100000;
constexpr int kMaxJobs = 256;

/// A row of the environment's table, over the evaluation's environment.
Row env_row(const std::string& key) {
  Row row = rebased<EvaluateOptions>(
      *find_knob(env_knobs(), key), [](auto& options) -> auto& { return options.env; });
  row.default_value.clear();
  return row;
}

std::vector<Row> what_rows() {
  return {Rows::texts(
              {.key = "scenario",
               .meaning = "scenario YAML file or built-in name (dynamix scenarios); repeat "
                          "for several (default: quickstart)"},
              [](auto& o) -> auto& { return o.scenario_paths; }),
          Rows::text(
              {.key = "policies",
               .meaning = "comma-separated policies, each POLICY or LABEL=POLICY: " +
                          policy_names() + "; ppo:PATH is labelled by the file's stem"},
              [](auto& o) -> auto& { return o.policy_list; }),
          Rows::quantity(
              {.key = "family",
               .meaning = "evaluate on this many samples (1, 2, ...) of each scenario's "
                          "randomized family, the one train --randomize trains on, instead "
                          "of the scenario itself"},
              [](auto& o) -> auto& { return o.family; }, integers(0, kMaxFamily)),
          Rows::quantity(
              {.key = "family-budget", .meaning = kFamilyBudgetHelp},
              [](auto& o) -> auto& { return o.family_budget; }, integers(0, kMaxFamilyBudget)),
          Rows::quantity(
              {.key = "seeds", .meaning = "seeds per scenario and policy"},
              [](auto& o) -> auto& { return o.seeds; }, integers(1)),
          Rows::quantity(
              {.key = "seed", .meaning = "first seed"},
              [](auto& o) -> auto& { return o.first_seed; }, integers(0))};
}

std::vector<Row> how_rows() {
  return {Rows::quantity(
              {.key = "decision-interval",
               .meaning = "iterations between decisions, k (default: a learned policy's "
                          "own, else 10)"},
              [](auto& o) -> auto& { return o.decision_interval; }, integers(1)),
          env_row("decision-lag"),
          env_row("max-batch-change"),
          env_row("max-lr-change"),
          Rows::quantity(
              {.key = "initial-batch",
               .meaning = "per-worker batch every adaptive policy starts from (static and "
                          "schedule policies start at their own)"},
              [](auto& o) -> auto& { return o.initial_batch; }, integers(1)),
          Rows::flag(
              {.key = "oracle",
               .meaning = "also search global-batch schedules for the fastest that reaches the "
                          "target on every seed (an upper bound) and report the headroom each "
                          "policy captures"},
              [](auto& o) -> auto& { return o.oracle; }),
          Rows::quantity(
              {.key = "jobs",
               .meaning = "policies run at once (threads); results do not depend on it",
               .default_value = "one per core"},
              [](auto& o) -> auto& { return o.jobs; }, integers(1, kMaxJobs)),
          Rows::texts(
              {.key = "set", .meaning = "override a value in every scenario: dotted.key=VALUE"},
              [](auto& o) -> auto& { return o.overrides; }),
          Rows::flag(
              {.key = "quiet", .meaning = "print no progress on stderr"},
              [](auto& o) -> auto& { return o.quiet; }),
          strict_knob<EvaluateOptions>(),
          Rows::text(
              {.key = "out", .meaning = "run directory to write", .default_value = "required"},
              [](auto& o) -> auto& { return o.out; })};
}

KnobTable<EvaluateOptions> make_evaluate_knobs() {
  std::vector<Row> rows = what_rows();
  for (Row& row : how_rows()) rows.push_back(std::move(row));
  return Rows::table("", "dynamix evaluate: compare batch-size policies on scenarios over seeds",
                     std::move(rows));
}

}  // namespace

EvaluateOptions::EvaluateOptions()
    : env(evaluation_env_options()),
      initial_batch(kEvaluationInitialBatch),
      jobs(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {}

const KnobTable<EvaluateOptions>& evaluate_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<EvaluateOptions> table = make_evaluate_knobs();
  return table;
}

}  // namespace dynamix
