// `dynamix scenarios`: the shipped scenarios, one line each.
#include "apps/scenarios.h"

#include <algorithm>
#include <iostream>

#include "apps/command_line.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_names.h"

namespace dynamix {

int run_scenarios(const std::vector<std::string>& args) {
  boost::program_options::options_description options(
      "dynamix scenarios: list the built-in scenarios (use --scenario NAME with any command)");
  bool validation = false;
  bool dynamic = false;
  options.add_options()("help,h", "print this help")(
      "validation", boost::program_options::bool_switch(&validation),
      "print the embedded paths of the held-out validation clusters instead, one per line, "
      "smallest first (the set train --select-on validation names)")(
      "dynamic", boost::program_options::bool_switch(&dynamic),
      "print the embedded paths of the dynamic clusters (stragglers with precursors, co-located "
      "jobs: docs/dynamic.md) instead, one per line, smallest first; with --validation their "
      "held-out set (the set train --select-on dynamic-validation names)");
  boost::program_options::variables_map values;
  if (parse_command_line(args, options, values)) return 0;
  if (validation || dynamic) {
    const std::vector<std::string> paths =
        dynamic ? (validation ? dynamic_validation_scenario_paths() : dynamic_scenario_paths())
                : validation_scenario_paths();
    for (const std::string& path : paths) std::cout << path << '\n';
    return 0;
  }
  struct Row {
    std::string name, workers, workload, description;
  };
  std::vector<Row> rows = {{"name", "workers", "workload", "description"}};
  for (const std::string& name : builtin_scenario_names()) {
    const Scenario scenario = load_scenario(builtin_scenario_path(name));
    const std::string text = scenario.resolved.text("description").value_or("");
    rows.push_back({name, std::to_string(scenario.worker_hosts.size()), scenario.workload.name,
                    text.substr(0, text.find('\n'))});
  }
  if (std::all_of(rows.begin() + 1, rows.end(),
                  [](const Row& row) { return row.description.empty(); }))
    rows.front().description.clear();
  std::size_t name_width = 0, workload_width = 0;
  for (const Row& row : rows) {
    name_width = std::max(name_width, row.name.size());
    workload_width = std::max(workload_width, row.workload.size());
  }
  for (const Row& row : rows) {
    std::string line = row.name + std::string(name_width - row.name.size() + 2, ' ') +
                       std::string(7 - std::min<std::size_t>(7, row.workers.size()), ' ') +
                       row.workers + "  " + row.workload;
    if (!row.description.empty())
      line += std::string(workload_width - row.workload.size() + 2, ' ') + row.description;
    std::cout << line << '\n';
  }
  return 0;
}

}  // namespace dynamix
