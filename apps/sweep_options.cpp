// `dynamix sweep`'s options table.
#include "apps/sweep_options.h"

#include <algorithm>
#include <thread>

#include "apps/knob_options.h"
#include "apps/policy_factory.h"
#include "sim/io/shared_options.h"

namespace dynamix {

namespace {

using Rows = KnobRows<SweepOptions, ExactNumbers>;
using Row = Knob<SweepOptions>;

using Shared = SharedRows<SweepOptions>;

std::vector<Row> definition_rows() {
  return {Shared::scenario([](auto& o) -> auto& { return o.spec.scenario; }),
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
          Shared::set([](auto& o) -> auto& { return o.spec.overrides; }),
          Shared::policies(
              [](auto& o) -> auto& { return o.policies; }, policy_names()),
          Shared::seeds([](auto& o) -> auto& { return o.spec.seeds; }),
          Shared::seed([](auto& o) -> auto& { return o.spec.first_seed; }),
          decision_interval_knob<SweepOptions>(
              [](auto& o) -> auto& { return o.spec.decision_interval; })};
}

std::vector<Row> run_rows() {
  return {Shared::jobs([](auto& o) -> auto& { return o.run.jobs; }),
          Shared::resume([](auto& o) -> auto& { return o.run.resume; }),
          Rows::quantity(
              {.key = "max-episodes",
               .meaning = "run at most this many of the episodes left, then stop, "
                          "resumable (e.g. per batch job)"},
              [](auto& o) -> auto& { return o.max_episodes; }, integers(1)),
          Shared::quiet([](auto& o) -> auto& { return o.run.quiet; }),
          Shared::strict([](auto& o) -> auto& { return o.strict; }),
          Shared::out([](auto& o) -> auto& { return o.run.out; })};
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
