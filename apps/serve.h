// `dynamix serve`: the arbitrator that gives real DDP workers the decisions of a policy.pt.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace dynamix {

/// Runs the subcommand on its arguments (after "serve") until SIGINT or SIGTERM.
int run_serve(const std::vector<std::string>& args);

/// The log file inside --log DIR, creating DIR (with the run-directory marker) when it is new
/// or empty. InputError on --log, before anything is written, when DIR exists and was not
/// written by `dynamix serve` (a user's folder, a file, another command's run directory).
std::filesystem::path prepare_log_directory(const std::filesystem::path& directory);

}  // namespace dynamix
