// `dynamix sweep`'s options table.
#include "apps/sweep_options.h"

#include <algorithm>
#include <thread>

#include "apps/knob_options.h"
#include "apps/policy_factory.h"

namespace dynamix {

namespace {

using Rows = KnobRows<SweepOptions, ExactNumbers>;
using Row = Knob<SweepOptions>;

constexpr int kMaxJobs = 1024;

std::vector<Row> definition_rows() {
  return {Rows::text(
              {.key = "scenario",
               .meaning = "scenario YAML file or built-in name",
               .default_value = "quickstart"},
              [](auto& o) -> auto& { return o.spec.scenario; }),
          Rows::texts(
              {.key = "grid",
               .meaning = "a scenario key and its values, KEY=V1,V2,... (as --set takes "
                          "them); repeat for more axes"},
              [](auto& o) -> auto& { return o.grid; }),
          Rows::texts(
              {.key = "grid-zip",
               .meaning = "KEY=V1,V2,... like --grid, but every --grid-zip key takes its i-th "
                          "value together with the others' i-th (equal lengths): one axis, not "
                          "a product"},
              [](auto& o) -> auto& { return o.grid_zip; }),
          Rows::texts(
              {.key = "set", .meaning = "override a value in every cell: dotted.key=VALUE"},
              [](auto& o) -> auto& { return o.spec.overrides; }),
          Rows::text(
              {.key = "policies", .meaning = "comma-separated policies: " + policy_names()},
              [](auto& o) -> auto& { return o.policies; }),
          Rows::quantity(
              {.key = "seeds", .meaning = "seeds per cell and policy"},
              [](auto& o) -> auto& { return o.spec.seeds; }, integers(1)),
          Rows::quantity(
              {.key = "seed", .meaning = "first seed"},
              [](auto& o) -> auto& { return o.spec.first_seed; }, integers(0)),
          Rows::quantity(
              {.key = "decision-interval", .meaning = "iterations between decisions, k"},
              [](auto& o) -> auto& { return o.spec.decision_interval; }, integers(1))};
}

std::vector<Row> run_rows() {
  return {Rows::quantity(
              {.key = "jobs",
               .meaning = "episodes run at once, on threads (per rank under mpirun)",
               .default_value = "one per core"},
              [](auto& o) -> auto& { return o.run.jobs; }, integers(1, kMaxJobs)),
          Rows::flag(
              {.key = "resume",
               .meaning = "continue the interrupted sweep in OUT.partial (same options); "
                          "without it OUT.partial is started afresh"},
              [](auto& o) -> auto& { return o.run.resume; }),
          Rows::quantity(
              {.key = "max-episodes",
               .meaning = "run at most this many of the episodes left, then stop, "
                          "resumable (e.g. per batch job)"},
              [](auto& o) -> auto& { return o.max_episodes; }, integers(1)),
          Rows::flag(
              {.key = "quiet", .meaning = "print no progress on stderr"},
              [](auto& o) -> auto& { return o.run.quiet; }),
          strict_knob<SweepOptions>(),
          Rows::text(
              {.key = "out", .meaning = "run directory to write", .default_value = "required"},
              [](auto& o) -> auto& { return o.run.out; })};
}

KnobTable<SweepOptions> make_sweep_knobs() {
  std::vector<Row> rows = definition_rows();
  for (Row& row : run_rows()) rows.push_back(std::move(row));
  return Rows::table("", "dynamix sweep: run every combination of --grid values × policies × seeds",
                     std::move(rows));
}

}  // namespace

SweepOptions::SweepOptions() {
  run.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

const KnobTable<SweepOptions>& sweep_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<SweepOptions> table = make_sweep_knobs();
  return table;
}

}  // namespace dynamix
