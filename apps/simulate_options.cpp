// `dynamix simulate`'s options table.
#include "apps/simulate_options.h"

#include "apps/knob_options.h"
#include "apps/policy_factory.h"
#include "gym/env_knobs.h"
#include "sim/io/shared_options.h"

namespace dynamix {

namespace {

using Rows = KnobRows<SimulateOptions, ExactNumbers>;
using Row = Knob<SimulateOptions>;

using Shared = SharedRows<SimulateOptions>;

/// A row of the environment's table over the policy's environment.
Row env_row(const std::string& key) {
  return Shared::part(
      env_knobs(), key, [](auto& o) -> auto& { return o.policy.env_options; });
}

std::vector<Row> run_rows() {
  return {Shared::scenario([](auto& o) -> auto& { return o.scenario_path; }),
          Shared::seed(
              [](auto& o) -> auto& { return o.seed; }, "the scenario's"),
          Rows::quantity(
              {.key = "iterations", .meaning = "stop after this many iterations"},
              [](auto& o) -> auto& { return o.iterations; }, integers(1)),
          Rows::text(
              {.key = "batch-size", .meaning = "the same batch on every worker"},
              [](auto& o) -> auto& { return o.batch_size; }),
          Rows::text(
              {.key = "batch-sizes", .meaning = "one batch per worker: B1,B2,..."},
              [](auto& o) -> auto& { return o.batch_sizes; }),
          Rows::text(
              {.key = "schedule", .meaning = "batch per worker from epoch E on: E0:B0,E1:B1,..."},
              [](auto& o) -> auto& { return o.schedule; }),
          Shared::set([](auto& o) -> auto& { return o.overrides; })};
}

std::vector<Row> policy_rows() {
  return {Shared::policy(
              [](auto& o) -> auto& { return o.policy.name; }, policy_names()),
          env_row("decision-interval"),
          env_row("decision-lag"),
          env_row("max-batch-change"),
          env_row("max-lr-change"),
          Rows::text(
              {.key = "record",
               .meaning = "per-iteration output: windows (windows.csv, one row per worker per "
                          "window of k iterations, means and sums; under 2x the simulation's "
                          "cost), iterations (iterations.csv, one row per worker per "
                          "iteration; about 6x) or none"},
              [](auto& o) -> auto& { return o.record; }),
          Rows::flag(
              Shared::words_of(*find_knob(env_knobs(), "stop-at-target")),
              [](auto& o) -> auto& { return o.policy.stop_at_target; }),
          Shared::strict([](auto& o) -> auto& { return o.strict; }),
          Shared::out([](auto& o) -> auto& { return o.out; })};
}

KnobTable<SimulateOptions> make_simulate_knobs() {
  std::vector<Row> rows = run_rows();
  for (Row& row : policy_rows()) rows.push_back(std::move(row));
  return Rows::table("", "dynamix simulate: run one training job on a simulated cluster",
                     std::move(rows));
}

}  // namespace

const KnobTable<SimulateOptions>& simulate_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<SimulateOptions> table = make_simulate_knobs();
  return table;
}

}  // namespace dynamix
