// The dynamix command: dispatches to subcommands and turns input errors into exit status 2.
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "apps/calibrate.h"
#include "apps/command_line.h"
#include "apps/config.h"
#include "apps/evaluate.h"
#include "apps/interrupt.h"
#include "apps/oracle.h"
#include "apps/scenarios.h"
#include "apps/simulate.h"
#include "apps/sweep.h"
#include "apps/train.h"
#include "apps/workloads.h"
#ifdef DYNAMIX_ADAPTER
#include "apps/replay.h"
#include "apps/serve.h"
#endif
#include "policies/export/torch_threads.h"
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
};

const Command kCommands[] = {
    {"simulate", "run one training job on a simulated cluster", dynamix::run_simulate},
    {"train", "pretrain a PPO batch-size policy offline", dynamix::run_train},
    {"evaluate", "compare policies on scenarios over seeds", dynamix::run_evaluate},
    {"oracle", "search batch schedules for the fastest that always reaches the target",
     dynamix::run_oracle},
    {"sweep", "run a grid of scenario values × policies × seeds, resumable", dynamix::run_sweep},
    {"export", "export a training checkpoint as TorchScript", dynamix::run_export},
    {"workloads", "list the workload catalog", dynamix::run_workloads},
    {"scenarios", "list the built-in scenarios, usable as --scenario NAME", dynamix::run_scenarios},
    {"calibrate", "fit a scenario's network and sync knobs to measurements of a cluster",
     dynamix::run_calibrate},
    {"fidelity", "compare a scenario's simulated times with measured ones", dynamix::run_fidelity},
    {"config", "list every scenario key: type, unit, default, range, meaning", dynamix::run_config},
#ifdef DYNAMIX_ADAPTER
    {"serve", "serve a policy.pt's decisions to real DDP workers (gRPC)", dynamix::run_serve},
    {"replay", "recompute a serve log's decisions and check they match", dynamix::run_replay},
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

}  // namespace

int main(int argc, char** argv) {
  // LibTorch's threads are the program's to set: one, fastest for these small networks.
  dynamix::set_torch_threads(1);
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
      if (args[0] == command.name) return command.run({args.begin() + 1, args.end()});
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
