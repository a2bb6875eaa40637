// The scenarios compiled into the binary, by name: the shipped set (short names any --scenario
// takes), the held-out validation sets and the training sets, enumerated from the embedded files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dynamix {

/// The short names of the shipped scenarios (the embedded scenarios/*.yaml: "hetero32",
/// "quickstart", ...), sorted.
std::vector<std::string> builtin_scenario_names();

/// The embedded path of a shipped scenario's short name.
std::string builtin_scenario_path(const std::string& name);

/// The embedded paths of the held-out validation clusters (scenarios/validation/*.yaml, their
/// topologies left out), smallest first: numbers inside names compare by value (v4 < v16).
std::vector<std::string> validation_scenario_paths();

/// The embedded paths of the dynamic clusters (scenarios/dynamic/*.yaml: stragglers with
/// precursors, co-located jobs), smallest first.
std::vector<std::string> dynamic_scenario_paths();

/// The embedded paths of the held-out dynamic clusters (scenarios/dynamic/validation/*.yaml),
/// smallest first: for selecting and checking policies, never for training.
std::vector<std::string> dynamic_validation_scenario_paths();

/// The embedded paths of the epoch-budget training clusters (scenarios/budget/*.yaml: static
/// clusters large for their data set, where a batch grown far past the noise scale spends the
/// epoch budget before the target), smallest first: for training, never for selection or reports.
std::vector<std::string> budget_scenario_paths();

/// The embedded paths of the five shipped scenarios (scenarios/*.yaml), smallest first.
std::vector<std::string> shipped_scenario_paths();

/// The embedded paths a named set stands for where a command takes one ("validation",
/// "dynamic-validation", "dynamic", "budget", "shipped"); nullopt for any other name.
std::optional<std::vector<std::string>> scenario_set(std::string_view name);

/// What --scenario names: an existing file or an "embedded:/" path as given, a shipped
/// scenario's short name as its embedded path. Any other bare name is an InputError on `option`
/// listing the shipped names; other paths are left for the loader to report.
std::string resolve_scenario(const std::string& name_or_path,
                             const std::string& option = "--scenario");

}  // namespace dynamix
