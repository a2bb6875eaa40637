// `dynamix train` and `dynamix export`: PPO pretraining on simulated clusters, TorchScript out.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

int run_train(const std::vector<std::string>& args);
int run_export(const std::vector<std::string>& args);

}  // namespace dynamix
