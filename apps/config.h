// `dynamix config`: every scenario key with its type, unit, default, range and meaning, as text
// or as the Markdown of docs/configuration.md.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "apps/command.h"

namespace dynamix {

struct ScenarioSpec;

/// The keys as text; with `values`, each key shows that spec's value beside its default.
void print_configuration(std::ostream& out, const ScenarioSpec* values = nullptr);

/// The keys as the Markdown reference page docs/configuration.md.
void print_configuration_markdown(std::ostream& out);

/// Every scenario and topology key, and every option table, as one JSON object (what the report
/// notebooks read); with `values`, each scenario key's value in them and the resolved scenario.
void print_configuration_json(std::ostream& out, const ScenarioSpec* values = nullptr);

/// `dynamix config [--markdown] [--scenario S --set KEY=VALUE ...]`.
int run_config(const std::vector<std::string>& args);
inline constexpr Command kConfigCommand{
    "config", "list every scenario key: type, unit, default, range, meaning", run_config};

}  // namespace dynamix
