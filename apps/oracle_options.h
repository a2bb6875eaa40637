// What `dynamix oracle` takes on its command line, declared once in a knob table.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "sim/io/knobs.h"

namespace dynamix {

/// Everything `dynamix oracle` takes on its command line (OracleOptions, studies/oracle.h, are
/// the search's own).
struct OracleArgs {
  /// Empty: quickstart.
  std::vector<std::string> scenario_paths;
  std::vector<std::string> overrides;
  std::string out;
  int seeds = 5;
  std::int64_t first_seed = 1000;
  EnvOptions env_options;
  /// One per core.
  int jobs;
  /// Search hindsight:... schedules, which know each seed's straggler timeline.
  bool hindsight = false;
  /// Instead of schedules, search per-window actions on each seed by exact replays
  /// (studies/rollout.h).
  bool rollout = false;
  /// Consecutive decisions one rollout choice holds.
  int rollout_block = 5;
  /// The rollout chooses which rule decides each block (the rule action base), from the
  /// per-scenario best rule, instead of goodput:R's R.
  bool rollout_rules = false;
  bool quiet = false;

  OracleArgs();
};

/// Oracle's options in --help order, defaults from OracleArgs{}.
const KnobTable<OracleArgs>& oracle_knobs();

}  // namespace dynamix
