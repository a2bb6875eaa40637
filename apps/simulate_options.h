// What `dynamix simulate` takes on its command line, declared once in a knob table.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"
#include "sim/io/knobs.h"
#include "sim/scenario/scenario.h"
#include "studies/iteration_log.h"

namespace dynamix {

/// How a --policy run goes: the policy, the environment it decides in, and what it writes.
struct PolicyRun {
  std::string name;
  EnvOptions env_options = env_preset("evaluation");
  bool decision_interval_given = false;
  bool stop_at_target = false;
  RecordMode record = RecordMode::kWindows;
};

/// Everything `dynamix simulate` takes on its command line.
struct SimulateOptions {
  std::string scenario_path = kDefaultScenario;
  std::string batch_size, batch_sizes, schedule, out;
  std::vector<std::string> overrides;
  /// Absent: the scenario's.
  std::optional<std::int64_t> seed;
  std::optional<std::int64_t> iterations;
  /// --record as given; PolicyRun::record once checked.
  std::string record = "windows";
  PolicyRun policy;
  bool strict = false;
};

/// Simulate's options in --help order, defaults from SimulateOptions{}: its own rows and the
/// rows of env_knobs() it exposes.
const KnobTable<SimulateOptions>& simulate_knobs();

}  // namespace dynamix
