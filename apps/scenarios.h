// The scenarios compiled into the binary: named by their short name, and listed by
// `dynamix scenarios`.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

/// The short names of the embedded scenarios ("hetero32", "quickstart", ...), sorted.
std::vector<std::string> builtin_scenario_names();

/// What --scenario names: an existing file or an "embedded:/" path as given, a built-in
/// scenario's short name as its embedded path. Any other bare name is an InputError on
/// `option` listing the built-in names; other paths are left for the loader to report.
std::string resolve_scenario(const std::string& name_or_path,
                             const std::string& option = "--scenario");

/// `dynamix scenarios`: one line per embedded scenario.
int run_scenarios(const std::vector<std::string>& args);

}  // namespace dynamix
