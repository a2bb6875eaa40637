// `dynamix workloads`: the workload catalog as a table.
#pragma once

#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

int run_workloads(const std::vector<std::string>& args);
inline constexpr Command kWorkloadsCommand{"workloads", "list the workload catalog", run_workloads};

}  // namespace dynamix
