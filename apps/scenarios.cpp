// `dynamix scenarios`: the shipped scenarios, one line each.
#include "apps/scenarios.h"

#include <algorithm>
#include <iostream>

#include "apps/knob_options.h"
#include "apps/small_options.h"
#include "sim/io/input_error.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_names.h"

namespace dynamix {

int run_scenarios(const std::vector<std::string>& args) {
  ScenariosOptions o;
  if (parse_knob_command_line(args, scenarios_knobs(), o)) return 0;
  if (o.validation || o.dynamic || o.budget) {
    if (o.budget && (o.validation || o.dynamic)) {
      throw InputError("--budget", 0, "", "--budget alone", "with --validation or --dynamic");
    }
    const std::string set = o.budget    ? "budget"
                            : o.dynamic ? (o.validation ? "dynamic-validation" : "dynamic")
                                        : "validation";
    const std::vector<std::string> paths = scenario_set(set).value();
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
