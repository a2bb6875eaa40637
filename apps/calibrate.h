// `dynamix calibrate` (fit a scenario's network and sync knobs to measurements of a real cluster)
// and `dynamix fidelity` (compare a scenario's simulated times with measured ones).
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

/// Measures this machine (scripts/measure_cluster.py, embedded) or reads --measured, fits the
/// knobs on the fit subset, and writes the calibrated scenario and the residuals to --out.
int run_calibrate(const std::vector<std::string>& args);
inline constexpr Command kCalibrateCommand{
    "calibrate", "fit a scenario's network and sync knobs to measurements of a cluster",
    run_calibrate};

/// Prints measured against simulated times per configuration, the median absolute errors and
/// Kendall's tau.
int run_fidelity(const std::vector<std::string>& args);
inline constexpr Command kFidelityCommand{
    "fidelity", "compare a scenario's simulated times with measured ones", run_fidelity};

}  // namespace dynamix
