// `dynamix workloads`: prints the embedded workload catalog.
#include "apps/workloads.h"

#include <iostream>

#include "apps/command_line.h"
#include "sim/training/workload.h"

namespace dynamix {

int run_workloads(const std::vector<std::string>& args) {
  if (parse_help_only(
          args,
          "dynamix workloads: list the workload catalog (models, datasets, costs, accuracies)"))
    return 0;
  print_workload_table(WorkloadCatalog::builtin(), std::cout);
  return 0;
}

}  // namespace dynamix
