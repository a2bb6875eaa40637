// `dynamix scenarios`: the scenarios compiled into the binary, listed.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

/// `dynamix scenarios`: one line per embedded scenario.
int run_scenarios(const std::vector<std::string>& args);
inline constexpr Command kScenariosCommand{
    "scenarios", "list the built-in scenarios, usable as --scenario NAME", run_scenarios};

}  // namespace dynamix
