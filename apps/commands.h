// The command table that dynamix and dynamix-torch share, and the main they share: the command
// chosen by its name, errors turned into one line on stderr and an exit status.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

/// The run functions of the commands that need LibTorch: dynamix-torch's. Null in dynamix,
/// which lists these commands all the same and hands them to dynamix-torch.
struct TorchCommands {
  CommandRun train = nullptr;
  CommandRun export_checkpoint = nullptr;
  CommandRun band = nullptr;
  CommandRun serve = nullptr;
  CommandRun replay = nullptr;
};

/// Every command of this build, in `dynamix --help` order.
std::vector<Command> command_table(const TorchCommands& torch = {});

/// Runs the command that `args[0]` names on the other arguments (usage, --help and --version
/// too) and returns the exit status: a NeedsLibTorch goes to `hand_over` (rethrown when it is
/// empty); an InputError is one line on stderr and 2; an interrupt 130; a failed check 70;
/// any other error 1.
int run_dynamix(const std::vector<Command>& commands, std::vector<std::string> args,
                const std::function<int(const NeedsLibTorch&)>& hand_over);

}  // namespace dynamix
