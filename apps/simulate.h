// `dynamix simulate`: one training job under a static batch or an epoch schedule.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

/// Runs the subcommand on its arguments (after "simulate"); returns the exit status.
int run_simulate(const std::vector<std::string>& args);
inline constexpr Command kSimulateCommand{"simulate", "run one training job on a simulated cluster",
                                          run_simulate};

}  // namespace dynamix
