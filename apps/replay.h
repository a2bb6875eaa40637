// `dynamix replay`: recomputes every decision of a dynamix serve log through the environment's
// code path and says whether they are the same.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

/// Runs the subcommand on its arguments (after "replay"); 0 when every decision matches, 1 at
/// the first that does not (naming the window and what differs), 2 for bad input.
int run_replay(const std::vector<std::string>& args);
/// Listed by dynamix, which has no LibTorch and so no run function for it: dynamix-torch
/// gives run_replay (apps/dynamix_torch.cpp).
inline constexpr Command kReplayCommand{"replay",
                                        "recompute a serve log's decisions and check they match"};

}  // namespace dynamix
