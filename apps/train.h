// `dynamix train` and `dynamix export`: PPO pretraining on simulated clusters, TorchScript out.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

int run_train(const std::vector<std::string>& args);
/// Listed by dynamix, which has no LibTorch and so no run function for it: dynamix-torch
/// gives run_train (apps/dynamix_torch.cpp).
inline constexpr Command kTrainCommand{"train", "pretrain a PPO batch-size policy offline"};
int run_export(const std::vector<std::string>& args);
/// Listed by dynamix, which has no LibTorch and so no run function for it: dynamix-torch
/// gives run_export (apps/dynamix_torch.cpp).
inline constexpr Command kExportCommand{"export", "export a training checkpoint as TorchScript"};

}  // namespace dynamix
