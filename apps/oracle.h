// `dynamix oracle`: the fastest global-batch schedule that reaches the target on every seed.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

int run_oracle(const std::vector<std::string>& args);

}  // namespace dynamix
