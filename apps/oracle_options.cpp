// `dynamix oracle`'s options table.
#include "apps/oracle_options.h"

#include <algorithm>
#include <thread>

#include "apps/knob_options.h"
#include "gym/env_knobs.h"

namespace dynamix {

namespace {

using Rows = KnobRows<OracleArgs, ExactNumbers>;

constexpr int kMaxJobs = 256;

KnobTable<OracleArgs> make_oracle_knobs() {
  return Rows::table(
      "",
      "dynamix oracle: search global-batch schedules for the fastest that reaches the target on "
      "every seed",
      {Rows::texts(
           {.key = "scenario",
            .meaning = "scenario YAML file or built-in name; repeat for several (default: "
                       "quickstart)"},
           [](auto& a) -> auto& { return a.scenario_paths; }),
       Rows::quantity(
           {.key = "seeds", .meaning = "seeds every finalist must reach on"},
           [](auto& a) -> auto& { return a.seeds; }, integers(1)),
       Rows::quantity(
           {.key = "seed", .meaning = "first seed"}, [](auto& a) -> auto& { return a.first_seed; },
           integers(0)),
       Rows::quantity(
           {.key = "decision-interval", .meaning = "iterations between decisions, k"},
           [](auto& a) -> auto& { return a.env_options.decision_interval; }, integers(1)),
       Rows::quantity(
           {.key = "jobs",
            .meaning = "episodes run at once (threads); results do not depend on it",
            .default_value = "one per core"},
           [](auto& a) -> auto& { return a.jobs; }, integers(1, kMaxJobs)),
       Rows::texts(
           {.key = "set", .meaning = "override a value: dotted.key=VALUE"},
           [](auto& a) -> auto& { return a.overrides; }),
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
       Rows::flag(
           {.key = "quiet", .meaning = "print no progress on stderr"},
           [](auto& a) -> auto& { return a.quiet; }),
       Rows::text(
           {.key = "out", .meaning = "run directory to write", .default_value = "required"},
           [](auto& a) -> auto& { return a.out; })});
}

}  // namespace

OracleArgs::OracleArgs()
    : env_options(evaluation_env_options()),
      jobs(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {}

const KnobTable<OracleArgs>& oracle_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<OracleArgs> table = make_oracle_knobs();
  return table;
}

}  // namespace dynamix
