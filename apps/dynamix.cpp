// The dynamix command: dispatches to subcommands and turns input errors into exit status 2.
// Built twice: `dynamix` without LibTorch, which hands a command line that needs it to
// `dynamix-torch` (built with DYNAMIX_TORCH), installed beside it.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "apps/calibrate.h"
#include "apps/command_line.h"
#include "apps/config.h"
#include "apps/evaluate.h"
#include "apps/oracle.h"
#include "apps/scenarios.h"
#include "apps/simulate.h"
#include "apps/sweep.h"
#include "apps/workloads.h"
#include "dynamix_config.h"
#include "studies/interrupt.h"
#ifdef DYNAMIX_TORCH
#include "apps/train.h"
#include "policies/export/torch_threads.h"
#ifdef DYNAMIX_ADAPTER
#include "apps/replay.h"
#include "apps/serve.h"
#endif
// A command that needs LibTorch: its function here, none in dynamix (main hands it over).
#define WITH_TORCH(function) function
#else
#define WITH_TORCH(function) nullptr
#endif
#include "sim/core/check.h"
#include "sim/io/input_error.h"

namespace {

int print_version(const std::vector<std::string>& args) {
  boost::program_options::options_description options("dynamix version: print the version");
  options.add_options()("help,h", "print this help");
  boost::program_options::variables_map values;
  if (dynamix::parse_command_line(args, options, values)) return 0;
  std::cout << "dynamix " << dynamix::kDynamixVersion << '\n';
  return 0;
}

struct Command {
  const char* name;
  const char* help;
  int (*run)(const std::vector<std::string>&);
  bool torch = false;
};

const Command kCommands[] = {
    {"simulate", "run one training job on a simulated cluster", dynamix::run_simulate},
    {"train", "pretrain a PPO batch-size policy offline", WITH_TORCH(dynamix::run_train), true},
    {"evaluate", "compare policies on scenarios over seeds", dynamix::run_evaluate},
    {"oracle", "search batch schedules for the fastest that always reaches the target",
     dynamix::run_oracle},
    {"sweep", "run a grid of scenario values × policies × seeds, resumable", dynamix::run_sweep},
    {"export", "export a training checkpoint as TorchScript", WITH_TORCH(dynamix::run_export),
     true},
    {"workloads", "list the workload catalog", dynamix::run_workloads},
    {"scenarios", "list the built-in scenarios, usable as --scenario NAME", dynamix::run_scenarios},
    {"calibrate", "fit a scenario's network and sync knobs to measurements of a cluster",
     dynamix::run_calibrate},
    {"fidelity", "compare a scenario's simulated times with measured ones", dynamix::run_fidelity},
    {"config", "list every scenario key: type, unit, default, range, meaning", dynamix::run_config},
#ifdef DYNAMIX_ADAPTER
    {"serve", "serve a policy.pt's decisions to real DDP workers (gRPC)",
     WITH_TORCH(dynamix::run_serve), true},
    {"replay", "recompute a serve log's decisions and check they match",
     WITH_TORCH(dynamix::run_replay), true},
#endif
    {"version", "print the version", print_version},
};

void print_usage(std::ostream& out) {
  out << "dynamix " << dynamix::kDynamixVersion
      << ": learn per-worker batch sizes for distributed training\n\nusage: dynamix COMMAND "
         "[OPTIONS]   (dynamix COMMAND --help for its options)\n\ncommands:\n";
  for (const Command& command : kCommands) {
    out << "  " << command.name << std::string(12 - std::string(command.name).size(), ' ')
        << command.help << '\n';
  }
}

#ifndef DYNAMIX_TORCH
/// Whether a command line needs LibTorch: a command that trains, exports or serves a policy, or
/// a learned policy (ppo:PATH) among its options.
bool needs_torch(const Command& command, const std::vector<std::string>& args) {
  return command.torch || std::any_of(args.begin(), args.end(), [](const std::string& arg) {
           return arg.find("ppo:") != std::string::npos;
         });
}

/// Runs dynamix-torch, from this executable's folder, in this process's place with the same
/// arguments; returns only by throwing.
int run_with_torch(char** argv) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const std::filesystem::path torch = self.parent_path() / "dynamix-torch";
  ::execv(torch.c_str(), argv);
  throw std::runtime_error("this command needs LibTorch, which dynamix leaves to dynamix-torch; " +
                           torch.string() + " did not start: " + std::strerror(errno));
}
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef DYNAMIX_TORCH
  // LibTorch's threads are the program's to set: one, fastest for these small networks.
  dynamix::set_torch_threads(1);
#endif
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    print_usage(std::cerr);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (args[0] == "--version" || args[0] == "-V") args[0] = "version";
  try {
    for (const Command& command : kCommands) {
      if (args[0] != command.name) continue;
#ifndef DYNAMIX_TORCH
      if (needs_torch(command, args)) return run_with_torch(argv);
#endif
      return command.run({args.begin() + 1, args.end()});
    }
    std::string names;
    for (const Command& command : kCommands)
      names += (names.empty() ? "" : ", ") + std::string(command.name);
    throw dynamix::InputError("command line", 0, "", "a command (" + names + ")",
                              "'" + args[0] + "'");
  } catch (const dynamix::Interrupted&) {
    std::cerr << "dynamix: interrupted; nothing was written\n";
    return 130;
  } catch (const dynamix::InputError& error) {
    std::cerr << "dynamix: " << error.what() << '\n';
    return 2;
  } catch (const dynamix::InvariantError& error) {
    std::cerr << "dynamix: internal error (please report): " << error.what() << '\n';
    return 70;
  } catch (const std::exception& error) {
    std::cerr << "dynamix: " << error.what() << '\n';
    return 1;
  }
}
