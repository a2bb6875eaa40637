// `dynamix workloads`: the workload catalog as a table.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

int run_workloads(const std::vector<std::string>& args);

}  // namespace dynamix
