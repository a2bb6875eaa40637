// The command table and the main that dynamix and dynamix-torch share.
#include "apps/commands.h"

#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/band.h"
#include "apps/calibrate.h"
#include "apps/command_line.h"
#include "apps/config.h"
#include "apps/evaluate.h"
#include "apps/export.h"
#include "apps/gpus.h"
#include "apps/oracle.h"
#include "apps/replay.h"
#include "apps/report.h"
#include "apps/scenarios.h"
#include "apps/serve.h"
#include "apps/simulate.h"
#include "apps/sweep.h"
#include "apps/train.h"
#include "apps/workloads.h"
#include "dynamix_config.h"
#include "sim/core/check.h"
#include "sim/io/input_error.h"
#include "studies/interrupt.h"
#include "studies/provenance.h"
#include "studies/version.h"

namespace dynamix {
namespace {

int print_version(const std::vector<std::string>& args) {
  if (parse_help_only(args, "dynamix version: print the version, the commit and the built parts")) {
    return 0;
  }
  std::cout << "dynamix " << kDynamixVersion << "\ncommit " << build_commit() << "\nbuilt:";
  for (const auto& [name, built] : build_features()) {
    std::cout << ' ' << name << (built ? "" : " (no)");
  }
  std::cout << '\n';
  return 0;
}

constexpr Command kVersionCommand{"version", "print the version, the commit and the built parts",
                                  print_version};

/// A command that needs LibTorch, with the run function this executable has for it (if any).
constexpr Command with_run(Command command, CommandRun run) {
  command.run = run;
  return command;
}

void print_usage(std::ostream& out, const std::vector<Command>& commands) {
  out << "dynamix " << kDynamixVersion
      << ": learn per-worker batch sizes for distributed training\n\nusage: dynamix COMMAND "
         "[OPTIONS]   (dynamix COMMAND --help for its options)\n\ncommands:\n";
  for (const Command& command : commands) {
    out << "  " << command.name << std::string(12 - std::string(command.name).size(), ' ')
        << command.help << '\n';
  }
}

/// Runs the command `args[0]` names; InputError listing the commands when none does.
int dispatch(const std::vector<Command>& commands, const std::vector<std::string>& args,
             const std::function<int(const NeedsLibTorch&)>& hand_over) {
  for (const Command& command : commands) {
    if (args[0] != command.name) continue;
    try {
      if (command.run == nullptr) throw NeedsLibTorch("command line", command.name);
      return command.run({args.begin() + 1, args.end()});
    } catch (const NeedsLibTorch& needs) {
      if (!hand_over) throw;
      return hand_over(needs);
    }
  }
  std::string names;
  for (const Command& command : commands) {
    names += (names.empty() ? "" : ", ") + std::string(command.name);
  }
  throw InputError("command line", 0, "", "a command (" + names + ")", "'" + args[0] + "'");
}

}  // namespace

std::vector<Command> command_table(const TorchCommands& torch) {
  // One command a line, in --help order.
  // clang-format off
  std::vector<Command> commands = {
      kSimulateCommand,
      with_run(kTrainCommand, torch.train),
      kEvaluateCommand,
      kOracleCommand,
      kSweepCommand,
      with_run(kExportCommand, torch.export_checkpoint),
      with_run(kBandCommand, torch.band),
      kWorkloadsCommand,
      kGpusCommand,
      kScenariosCommand,
      kCalibrateCommand,
      kFidelityCommand,
      kConfigCommand,
      kReportCommand,
  };
  // clang-format on
#ifdef DYNAMIX_ADAPTER
  commands.push_back(with_run(kServeCommand, torch.serve));
  commands.push_back(with_run(kReplayCommand, torch.replay));
#endif
  commands.push_back(kVersionCommand);
  return commands;
}

int run_dynamix(const std::vector<Command>& commands, std::vector<std::string> args,
                const std::function<int(const NeedsLibTorch&)>& hand_over) {
  if (args.empty()) {
    print_usage(std::cerr, commands);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(std::cout, commands);
    return 0;
  }
  if (args[0] == "--version" || args[0] == "-V") args[0] = "version";
  try {
    return dispatch(commands, args, hand_over);
  } catch (const Interrupted&) {
    std::cerr << "dynamix: interrupted; nothing was written\n";
    return 130;
  } catch (const InputError& error) {
    return say_input_error(error);
  } catch (const InvariantError& error) {
    std::cerr << "dynamix: internal error (please report): " << error.what() << '\n';
    return 70;
  } catch (const std::exception& error) {
    std::cerr << "dynamix: " << error.what() << '\n';
    return 1;
  }
}

}  // namespace dynamix
