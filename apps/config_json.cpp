// `dynamix config --json`: the knob tables as one JSON object, for the report notebooks.
#include <type_traits>

#include "apps/config.h"
#include "apps/option_tables.h"
#include "sim/cluster/topology_knobs.h"
#include "sim/io/json_writer.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_knobs.h"
#include "studies/version.h"

namespace dynamix {

namespace {

/// What every row says of itself, as members of the JSON object being written.
void write_option_fields(JsonWriter& json, const KnobOption& option) {
  for (const auto& [name, text] : {std::pair<const char*, const std::string&>{"key", option.key},
                                   {"type", option.type},
                                   {"unit", option.unit},
                                   {"default", option.default_value},
                                   {"range", option.range},
                                   {"meaning", option.meaning},
                                   {"source", option.source}}) {
    json.key(name);
    json.value(text);
  }
}

/// One key of a scenario or topology table as a JSON object, with its typical bound and, given
/// the scenario's values, its value.
template <typename Target>
void write_key_json(JsonWriter& json, const Knob<Target>& knob, const ScenarioSpec* values) {
  json.begin_object();
  write_option_fields(json, knob_option(knob));
  json.key("typical_high");
  if (knob.typical) {
    json.value(knob.typical->high);
  } else {
    json.null();
  }
  if constexpr (std::is_same_v<Target, ScenarioSpec>) {
    if (values != nullptr) {
      json.key("value");
      json.value(knob.show(*values));
    }
  }
  json.end_object();
}

template <typename Table>
void write_tables_json(JsonWriter& json, const std::vector<Table>& tables,
                       const ScenarioSpec* values) {
  json.begin_array();
  for (const Table& table : tables) {
    json.begin_object();
    json.key("section");
    json.value(table.section);
    json.key("meaning");
    json.value(table.meaning);
    json.key("keys");
    json.begin_array();
    for (const auto& knob : table.knobs) write_key_json(json, knob, values);
    json.end_array();
    json.end_object();
  }
  json.end_array();
}

void write_option_tables_json(JsonWriter& json) {
  json.begin_array();
  for (const OptionTable& table : option_tables()) {
    json.begin_object();
    json.key("name");
    json.value(table.name);
    json.key("meaning");
    json.value(table.meaning);
    json.key("where");
    json.value(table.where);
    json.key("options");
    json.begin_array();
    for (const KnobOption& option : table.options) {
      json.begin_object();
      write_option_fields(json, option);
      json.end_object();
    }
    json.end_array();
    json.end_object();
  }
  json.end_array();
}

}  // namespace

void print_configuration_json(std::ostream& out, const ScenarioSpec* values) {
  JsonWriter json(out);
  json.begin_object();
  json.key("version");
  json.value(kDynamixVersion);
  json.key("scenario");
  write_tables_json(json, scenario_knobs(), values);
  json.key("topology");
  write_tables_json(json, topology_knobs(), nullptr);
  json.key("options");
  write_option_tables_json(json);
  if (values != nullptr) {
    json.key("resolved");
    json.value(values->resolved);
  }
  json.end_object();
  out << '\n';
}

}  // namespace dynamix
