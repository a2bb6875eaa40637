// `dynamix gpus`: the device catalog a topology's nodes name.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

int run_gpus(const std::vector<std::string>& args);
inline constexpr Command kGpusCommand{"gpus", "list the GPU catalog topologies name", run_gpus};

}  // namespace dynamix
