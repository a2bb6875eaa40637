// `dynamix oracle`'s options table.
#include "apps/oracle_options.h"

#include <algorithm>
#include <thread>

#include "apps/knob_options.h"
#include "gym/env_knobs.h"
#include "sim/io/shared_options.h"

namespace dynamix {

namespace {

using Rows = KnobRows<OracleArgs, ExactNumbers>;

using Shared = SharedRows<OracleArgs>;

KnobTable<OracleArgs> make_oracle_knobs() {
  return Rows::table(
      "",
      "dynamix oracle: search global-batch schedules for the fastest that reaches the target on "
      "every seed",
      {Shared::scenario([](auto& a) -> auto& { return a.scenario_paths; }),
       Shared::seeds([](auto& a) -> auto& { return a.seeds; }),
       Shared::seed([](auto& a) -> auto& { return a.first_seed; }),
       Shared::part(
           env_knobs(), "decision-interval", [](auto& a) -> auto& { return a.env_options; }),
       Shared::jobs([](auto& a) -> auto& { return a.jobs; }),
       Shared::set([](auto& a) -> auto& { return a.overrides; }),
       Rows::flag(
           {.key = "hindsight",
            .meaning = "search hindsight:... schedules, whose split knows each seed's straggler "
                       "timeline (replayed from the seed), for a bound on dynamic clusters"},
           [](auto& a) -> auto& { return a.hindsight; }),
       Rows::flag(
           {.key = "rollout",
            .meaning = "instead of schedules, choose goodput:R's R window by window on each seed "
                       "by replaying it (the seed's whole future known), starting from "
                       "goodput:100: a per-window hindsight bound (rollout.csv)"},
           [](auto& a) -> auto& { return a.rollout; }),
       Rows::quantity(
           {.key = "rollout-block",
            .meaning = "consecutive decisions one --rollout choice holds (1: every window alone)"},
           [](auto& a) -> auto& { return a.rollout_block; }, integers(1, 1000)),
       Rows::flag(
           {.key = "rollout-rules",
            .meaning = "with --rollout: choose which rule decides each block (the rule action "
                       "base's rules), starting from the per-scenario best rule: the headroom "
                       "over it and over the best single rule"},
           [](auto& a) -> auto& { return a.rollout_rules; }),
       Shared::quiet([](auto& a) -> auto& { return a.quiet; }),
       Shared::out([](auto& a) -> auto& { return a.out; })});
}

}  // namespace

OracleArgs::OracleArgs()
    : env_options(env_preset("evaluation")),
      jobs(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {}

const KnobTable<OracleArgs>& oracle_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<OracleArgs> table = make_oracle_knobs();
  return table;
}

}  // namespace dynamix
