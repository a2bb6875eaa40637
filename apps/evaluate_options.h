// What `dynamix evaluate` takes on its command line, declared once in a knob table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "sim/io/knobs.h"

namespace dynamix {

/// Everything `dynamix evaluate` takes on its command line.
struct EvaluateOptions {
  /// Empty: quickstart.
  std::vector<std::string> scenario_paths;
  std::vector<std::string> overrides;
  std::string policy_list =
      "static:32,static:64,static:128,static:256,goodput,proportional,gns,goodput+proportional";
  std::string out;
  int seeds = 5;
  std::int64_t first_seed = 1000;
  int family = 0;
  int family_budget = 0;
  /// Absent: a learned policy's own, else the evaluation environment's.
  std::optional<int> decision_interval;
  /// The evaluation environment (gym/env_knobs.h) with --decision-lag, the guard rails and the
  /// batch every adaptive policy starts from.
  EnvOptions env;
  /// One per core.
  int jobs;
  bool oracle = false;
  bool quiet = false;
  bool strict = false;

  EvaluateOptions();
};

/// Evaluate's options in --help order, defaults from EvaluateOptions{}.
const KnobTable<EvaluateOptions>& evaluate_knobs();

/// InputError on --seeds unless every episode's result fits in memory, checked before any
/// scenario is loaded.
void require_evaluation_fits(const EvaluateOptions& a, std::size_t policies);

}  // namespace dynamix
