// `dynamix sweep`: what-if studies over a grid of scenario values × policies × seeds.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

int run_sweep(const std::vector<std::string>& args);

}  // namespace dynamix
