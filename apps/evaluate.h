// `dynamix evaluate`: policies × scenarios × seeds, with a results table.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

int run_evaluate(const std::vector<std::string>& args);

}  // namespace dynamix
