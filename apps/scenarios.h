// `dynamix scenarios`: the scenarios compiled into the binary, listed.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

/// `dynamix scenarios`: one line per embedded scenario.
int run_scenarios(const std::vector<std::string>& args);

}  // namespace dynamix
