// `dynamix calibrate --dynamics`: fit a workload's training dynamics and the simulator's
// gradient-statistics noise to logs of real training runs.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

/// Whether calibrate's arguments ask for the statistical fit (--dynamics).
bool asks_for_dynamics(const std::vector<std::string>& args);

/// Reads the runs CSV, fits, prints a summary and writes workload.yaml, catalog.yaml,
/// dynamics_fit.csv, estimator_noise.csv and a copy of the runs to --out.
int run_calibrate_dynamics(const std::vector<std::string>& args);

}  // namespace dynamix
