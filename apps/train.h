// `dynamix train`: PPO pretraining on simulated clusters.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

int run_train(const std::vector<std::string>& args);
/// Listed by dynamix, which has no LibTorch and so no run function for it: dynamix-torch
/// gives run_train (apps/dynamix_torch.cpp).
inline constexpr Command kTrainCommand{"train", "pretrain a PPO batch-size policy offline"};

}  // namespace dynamix
