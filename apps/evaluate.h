// `dynamix evaluate`: policies × scenarios × seeds, with a results table.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

int run_evaluate(const std::vector<std::string>& args);
inline constexpr Command kEvaluateCommand{"evaluate", "compare policies on scenarios over seeds",
                                          run_evaluate};

}  // namespace dynamix
