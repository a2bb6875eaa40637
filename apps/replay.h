// `dynamix replay`: recomputes every decision of a dynamix serve log through the environment's
// code path and says whether they are the same.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

/// Runs the subcommand on its arguments (after "replay"); 0 when every decision matches, 1 at
/// the first that does not (naming the window and what differs), 2 for bad input.
int run_replay(const std::vector<std::string>& args);

}  // namespace dynamix
