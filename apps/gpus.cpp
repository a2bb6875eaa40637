// `dynamix gpus`: prints the embedded GPU catalog.
#include "apps/gpus.h"

#include <iostream>

#include "apps/command_line.h"
#include "sim/cluster/gpu_catalog.h"

namespace dynamix {

int run_gpus(const std::vector<std::string>& args) {
  if (parse_help_only(args,
                      "dynamix gpus: list the GPU catalog (memory, peak, efficiency model); a "
                      "topology's nodes name these, or devices a scenario declares"))
    return 0;
  print_gpu_table(GpuCatalog::builtin(), std::cout);
  return 0;
}

}  // namespace dynamix
