// `dynamix workloads`: prints the embedded workload catalog.
#include "apps/workloads.h"

#include <iostream>

#include "apps/command_line.h"
#include "sim/training/workload.h"

namespace dynamix {

int run_workloads(const std::vector<std::string>& args) {
  boost::program_options::options_description options(
      "dynamix workloads: list the workload catalog (models, datasets, costs, accuracies)");
  options.add_options()("help,h", "print this help");
  boost::program_options::variables_map values;
  if (parse_command_line(args, options, values)) return 0;
  print_workload_table(WorkloadCatalog::builtin(), std::cout);
  return 0;
}

}  // namespace dynamix
