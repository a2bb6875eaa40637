// `dynamix evaluate`'s options table.
#include "apps/evaluate_options.h"

#include <algorithm>
#include <thread>

#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "apps/oracle.h"
#include "apps/policy_factory.h"
#include "gym/env_knobs.h"
#include "sim/io/shared_options.h"
#include "studies/episode_feed.h"
#include "studies/evaluation.h"

namespace dynamix {

namespace {

using Rows = KnobRows<EvaluateOptions, ExactNumbers>;
using Row = Knob<EvaluateOptions>;

constexpr int kMaxFamily = 100000;

using Shared = SharedRows<EvaluateOptions>;

/// A row of the environment's table, over the evaluation's environment.
Row env_row(const std::string& key) {
  return Shared::part(
      env_knobs(), key, [](auto& options) -> auto& { return options.env; });
}

std::vector<Row> what_rows() {
  return {Shared::scenario([](auto& o) -> auto& { return o.scenario_paths; }),
          Shared::policies(
              [](auto& o) -> auto& { return o.policy_list; }, policy_names()),
          Rows::quantity(
              {.key = "family",
               .meaning = "evaluate on this many samples (1, 2, ...) of each scenario's "
                          "randomized family, the one train --randomize trains on, instead "
                          "of the scenario itself"},
              [](auto& o) -> auto& { return o.family; }, integers(0, kMaxFamily)),
          Rows::quantity(
              {.key = "family-budget", .meaning = kFamilyBudgetHelp},
              [](auto& o) -> auto& { return o.family_budget; }, integers(0, kMaxFamilyBudget)),
          Shared::seeds([](auto& o) -> auto& { return o.seeds; }),
          Shared::seed([](auto& o) -> auto& { return o.first_seed; })};
}

std::vector<Row> how_rows() {
  // Absent: a learned policy's own interval, else the evaluation environment's.
  return {
      decision_interval_knob<EvaluateOptions>([](auto& o) -> auto& { return o.decision_interval; }),
      env_row("decision-lag"),
      env_row("max-batch-change"),
      env_row("max-lr-change"),
      env_row("initial-batch"),
      Rows::flag(
          {.key = "oracle",
           .meaning = "also search global-batch schedules for the fastest that reaches the "
                      "target on every seed (an upper bound) and report the headroom each "
                      "policy captures"},
          [](auto& o) -> auto& { return o.oracle; }),
      Shared::jobs([](auto& o) -> auto& { return o.jobs; }),
      Shared::set([](auto& o) -> auto& { return o.overrides; }),
      Shared::quiet([](auto& o) -> auto& { return o.quiet; }),
      Shared::strict([](auto& o) -> auto& { return o.strict; }),
      Shared::out([](auto& o) -> auto& { return o.out; })};
}

KnobTable<EvaluateOptions> make_evaluate_knobs() {
  std::vector<Row> rows = what_rows();
  for (Row& row : how_rows()) rows.push_back(std::move(row));
  return Rows::table("", "dynamix evaluate: compare batch-size policies on scenarios over seeds",
                     std::move(rows));
}

}  // namespace

EvaluateOptions::EvaluateOptions()
    : env([] {
        EnvOptions env = env_preset("evaluation");
        env.initial_batch = kEvaluationInitialBatch;
        return env;
      }()),
      jobs(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {}

const KnobTable<EvaluateOptions>& evaluate_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<EvaluateOptions> table = make_evaluate_knobs();
  return table;
}

void require_evaluation_fits(const EvaluateOptions& a, std::size_t policies) {
  const std::size_t scenarios =
      a.scenario_paths.size() * static_cast<std::size_t>(std::max(1, a.family));
  const std::size_t rows = policies + (a.oracle ? 1 : 0);
  require_episodes_fit("--seeds", {scenarios, rows, static_cast<std::size_t>(a.seeds)},
                       std::to_string(scenarios) + " scenarios × " + std::to_string(rows) +
                           " policies × " + std::to_string(a.seeds) + " seeds");
  if (a.oracle) require_search_fits(a.seeds);
}

}  // namespace dynamix
