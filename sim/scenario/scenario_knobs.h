// Every key of a scenario file, declared once: its type, unit, range, default, meaning and
// source. The tables drive parsing, range checks, --set, error messages, `dynamix config` and
// docs/configuration.md.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace dynamix {

class ConfigNode;
struct ScenarioSpec;

/// One key of a scenario file.
struct Knob {
  /// The dotted key as --set takes it ("network.mss_bytes").
  std::string key;
  /// "number", "integer", "true or false", "one of ring, ps", "text", "file or map", "list".
  std::string type;
  /// The unit the file gives the value in ("KiB", "ms"); empty for plain quantities.
  std::string unit;
  /// What a value must satisfy, as errors say it ("a number > 0").
  std::string range;
  /// The value when the key is absent.
  std::string default_value;
  /// One line: what the key controls.
  std::string meaning;
  /// Where the default comes from (a paper, a standard, "assumed").
  std::string source;
  /// Reads the key from its section's map, checked, into the spec; absent keys leave the spec
  /// as it is. Empty for keys the scenario loader reads itself (topology, traces).
  std::function<void(const ConfigNode& section, ScenarioSpec& spec)> read = {};
  /// The spec's value as found when it lies outside the range (specs built in code); empty for
  /// keys whose every value is valid.
  std::function<std::optional<std::string>(const ScenarioSpec& spec)> violation = {};
  /// The spec's value as a file would give it.
  std::function<std::string(const ScenarioSpec& spec)> show = {};
};

/// The keys of one section of a scenario file ("" for the top level).
struct KnobTable {
  std::string section;
  /// One line: what the section configures.
  std::string meaning;
  std::vector<Knob> knobs;
  /// Sets what depends on other keys of the section when they are absent (the LR rule follows
  /// the optimizer, the target and budget follow the workload); may be empty.
  std::function<void(const ConfigNode* section, ScenarioSpec& spec)> complete;
};

/// The tables of the scenario file: top level, training, sync, network, variability.
const std::vector<KnobTable>& scenario_knobs();

}  // namespace dynamix
