// Built-in scenarios: short names resolved to embedded paths, and their listing.
#include "apps/scenarios.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "apps/command_line.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"
#include "sim/scenario/scenario.h"

namespace dynamix {

namespace {

constexpr std::string_view kScenarioFolder = "scenarios/";
constexpr std::string_view kScenarioExtension = ".yaml";

std::string embedded_scenario(const std::string& name) {
  return std::string(kEmbeddedPrefix) + std::string(kScenarioFolder) + name +
         std::string(kScenarioExtension);
}

}  // namespace

std::vector<std::string> builtin_scenario_names() {
  std::vector<std::string> names;
  for (const std::string& path : embedded_paths()) {
    if (!path.starts_with(kScenarioFolder) || !path.ends_with(kScenarioExtension)) continue;
    const std::string name = path.substr(
        kScenarioFolder.size(), path.size() - kScenarioFolder.size() - kScenarioExtension.size());
    if (name.find('/') == std::string::npos) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolve_scenario(const std::string& name_or_path, const std::string& option) {
  const bool bare_name = !name_or_path.empty() && name_or_path.find('/') == std::string::npos &&
                         !name_or_path.ends_with(kScenarioExtension) &&
                         !name_or_path.starts_with(kEmbeddedPrefix);
  std::error_code ignored;
  if (!bare_name || std::filesystem::exists(name_or_path, ignored)) return name_or_path;
  const std::vector<std::string> names = builtin_scenario_names();
  if (std::find(names.begin(), names.end(), name_or_path) != names.end())
    return embedded_scenario(name_or_path);
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  throw InputError(option, 0, "", "a scenario file or a built-in scenario (" + list + ")",
                   "'" + name_or_path + "'");
}

int run_scenarios(const std::vector<std::string>& args) {
  if (parse_help_only(
          args,
          "dynamix scenarios: list the built-in scenarios (use --scenario NAME with any command)"))
    return 0;
  struct Row {
    std::string name, workers, workload, description;
  };
  std::vector<Row> rows = {{"name", "workers", "workload", "description"}};
  for (const std::string& name : builtin_scenario_names()) {
    const Scenario scenario = load_scenario(embedded_scenario(name));
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
