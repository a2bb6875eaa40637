// `dynamix simulate`'s options table.
#include "apps/simulate_options.h"

#include "apps/knob_options.h"
#include "apps/policy_factory.h"

namespace dynamix {

namespace {

using Rows = KnobRows<SimulateOptions, ExactNumbers>;
using Row = Knob<SimulateOptions>;

/// A row of the environment's table over the policy's environment, in simulate's words when
/// given.
Row env_row(const std::string& key, const std::string& meaning = "") {
  Row row = rebased<SimulateOptions>(
      *find_knob(env_knobs(), key), [](auto& o) -> auto& { return o.policy.env_options; });
  row.default_value.clear();
  if (!meaning.empty()) row.meaning = meaning;
  return row;
}

std::vector<Row> run_rows() {
  return {Rows::text(
              {.key = "scenario",
               .meaning = "scenario YAML file or built-in name (dynamix scenarios)",
               .default_value = "quickstart"},
              [](auto& o) -> auto& { return o.scenario_path; }),
          Rows::quantity(
              {.key = "seed", .meaning = "root seed (default: the scenario's)"},
              [](auto& o) -> auto& { return o.seed; }, integers(0)),
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
          Rows::texts(
              {.key = "set", .meaning = "override a scenario value: dotted.key=VALUE"},
              [](auto& o) -> auto& { return o.overrides; })};
}

std::vector<Row> policy_rows() {
  return {Rows::text(
              {.key = "policy",
               .meaning = "run a policy through the environment, deciding every k iterations: " +
                          policy_names()},
              [](auto& o) -> auto& { return o.policy.name; }),
          env_row("decision-interval",
                  "iterations between the policy's decisions, k (a ppo:PATH policy's own unless "
                  "given); also the window of --record windows"),
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
              {.key = "stop-at-target", .meaning = "stop when the target accuracy is reached"},
              [](auto& o) -> auto& { return o.policy.stop_at_target; }),
          strict_knob<SimulateOptions>(),
          Rows::text(
              {.key = "out", .meaning = "run directory to write", .default_value = "required"},
              [](auto& o) -> auto& { return o.out; })};
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
