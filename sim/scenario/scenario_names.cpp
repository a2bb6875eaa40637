// Shipped and validation scenarios enumerated from the embedded files, and --scenario's names.
#include "sim/scenario/scenario_names.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <string_view>

#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {

namespace {

constexpr std::string_view kScenarioFolder = "scenarios/";
constexpr std::string_view kValidationFolder = "scenarios/validation/";
constexpr std::string_view kDynamicFolder = "scenarios/dynamic/";
constexpr std::string_view kDynamicValidationFolder = "scenarios/dynamic/validation/";
constexpr std::string_view kBudgetFolder = "scenarios/budget/";
constexpr std::string_view kScenarioExtension = ".yaml";
constexpr std::string_view kTopologyExtension = ".topology.yaml";

/// The names of the scenario files directly inside `folder` (embedded paths), sorted.
std::vector<std::string> scenario_names_in(std::string_view folder) {
  std::vector<std::string> names;
  for (const std::string& path : embedded_paths()) {
    if (!path.starts_with(folder) || !path.ends_with(kScenarioExtension) ||
        path.ends_with(kTopologyExtension))
      continue;
    const std::string name =
        path.substr(folder.size(), path.size() - folder.size() - kScenarioExtension.size());
    if (name.find('/') == std::string::npos) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// Whether `a` sorts before `b` when runs of digits compare by their value ("v4" < "v16").
bool natural_less(const std::string& a, const std::string& b) {
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) &&
        std::isdigit(static_cast<unsigned char>(b[j]))) {
      const std::size_t a_end = a.find_first_not_of("0123456789", i);
      const std::size_t b_end = b.find_first_not_of("0123456789", j);
      const std::string x = a.substr(i, a_end - i), y = b.substr(j, b_end - j);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = std::min(a_end, a.size());
      j = std::min(b_end, b.size());
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

/// The embedded paths of the scenarios directly inside `folder`, smallest first.
std::vector<std::string> embedded_paths_in(std::string_view folder) {
  std::vector<std::string> names = scenario_names_in(folder);
  std::sort(names.begin(), names.end(), natural_less);
  std::vector<std::string> paths;
  paths.reserve(names.size());
  for (const std::string& name : names) {
    paths.push_back(std::string(kEmbeddedPrefix) + std::string(folder) + name +
                    std::string(kScenarioExtension));
  }
  return paths;
}

}  // namespace

std::vector<std::string> builtin_scenario_names() { return scenario_names_in(kScenarioFolder); }

std::string builtin_scenario_path(const std::string& name) {
  return std::string(kEmbeddedPrefix) + std::string(kScenarioFolder) + name +
         std::string(kScenarioExtension);
}

std::vector<std::string> validation_scenario_paths() {
  return embedded_paths_in(kValidationFolder);
}

std::vector<std::string> dynamic_scenario_paths() { return embedded_paths_in(kDynamicFolder); }

std::vector<std::string> dynamic_validation_scenario_paths() {
  return embedded_paths_in(kDynamicValidationFolder);
}

std::vector<std::string> budget_scenario_paths() { return embedded_paths_in(kBudgetFolder); }

std::vector<std::string> shipped_scenario_paths() { return embedded_paths_in(kScenarioFolder); }

namespace {

struct ScenarioSet {
  std::string_view name;
  std::vector<std::string> (*paths)();
};

constexpr ScenarioSet kScenarioSets[] = {
    {"validation", validation_scenario_paths},
    {"dynamic-validation", dynamic_validation_scenario_paths},
    {"dynamic", dynamic_scenario_paths},
    {"budget", budget_scenario_paths},
    {"shipped", shipped_scenario_paths},
};

}  // namespace

std::optional<std::vector<std::string>> scenario_set(std::string_view name) {
  for (const ScenarioSet& set : kScenarioSets) {
    if (set.name == name) return set.paths();
  }
  return std::nullopt;
}

std::string resolve_scenario(const std::string& name_or_path, const std::string& option) {
  const bool bare_name = !name_or_path.empty() && name_or_path.find('/') == std::string::npos &&
                         !name_or_path.ends_with(kScenarioExtension) &&
                         !name_or_path.starts_with(kEmbeddedPrefix);
  std::error_code ignored;
  if (!bare_name || std::filesystem::exists(name_or_path, ignored)) return name_or_path;
  const std::vector<std::string> names = builtin_scenario_names();
  if (std::find(names.begin(), names.end(), name_or_path) != names.end())
    return builtin_scenario_path(name_or_path);
  throw InputError(option, 0, "", "a scenario file or a built-in scenario (" + join(names) + ")",
                   "'" + name_or_path + "'");
}

}  // namespace dynamix
