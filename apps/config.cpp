// `dynamix config`: the knob tables rendered for people (text) and for docs/ (Markdown).
#include "apps/config.h"

#include <charconv>
#include <iostream>
#include <sstream>

#include "apps/command_line.h"
#include "apps/option_tables.h"
#include "apps/small_options.h"
#include "sim/cluster/topology_knobs.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_knobs.h"
#include "sim/scenario/scenario_names.h"
#include "studies/version.h"

namespace dynamix {
namespace {

/// How --set reaches a topology key, said in the text and in the reference.
constexpr const char* kTopologySetPaths =
    "--set topology.KEY=VALUE edits the scenario's topology (its file or inline map) by dotted "
    "path: list entries are numbered from 0, and topology.nodes.N is the N-th node GROUP (an "
    "entry of nodes:, with its count), not the N-th node; a fabric scales with "
    "topology.fabric.nodes=N";

/// One example of each topology shape, as the reference shows them.
constexpr const char* kTopologyExamples = R"(
Explicit nodes: two node groups (`count` nodes each, named by `{i}`), one switch, lossy uplinks
on the V100s. `--set topology.nodes.1.count=8` makes the second group 8 nodes.

```yaml
topology:
  name: trial
  switches: [tor]
  nodes:
    - {name: "a100-{i}", count: 2, gpu: A100, gpus: 2, cpu_cores: 32,
       link: {to: tor, bandwidth_gbps: 100, latency_us: 2}}
    - {name: "v100-{i}", count: 4, gpu: V100, cpu_cores: 16,
       link: {to: tor, bandwidth_gbps: 25, latency_us: 2, loss_rate: 1e-4}}
```

A generated fabric: `--set topology.fabric.nodes=4096` scales it.

```yaml
topology:
  fabric: {kind: leaf-spine, nodes: 64, hosts_per_leaf: 16, spines: 4,
           host_bandwidth_gbps: 100, gpus: {A100: 0.5, V100: 0.5}, gpus_per_node: 2}
```

A fabric with node groups (scenarios/studies/trial_cluster.yaml): each group its own GPU, node
shape, uplink and loss; shares of `nodes` rounded by largest remainder.

```yaml
topology:
  fabric:
    kind: leaf-spine
    nodes: 12
    host_bandwidth_gbps: 25
    groups:
      - {gpu: A100, share: 0.25, gpus_per_node: 2, host_bandwidth_gbps: 100}
      - {gpu: V100, share: 0.5, loss_rate: 1e-4}
      - {gpu: RTX3090, share: 0.25}
```
)";

/// The row's range, and its typical range where it has one ("a number > 0; typical <= 1600
/// Gb/s": a value beyond warns).
template <typename Target>
std::string range_text(const Knob<Target>& knob) {
  if (!knob.typical) return knob.range;
  std::string text = knob.range;
  text += "; typical <= ";
  text += format_number(knob.typical->high);
  if (!knob.unit.empty()) text += " " + knob.unit;
  return text;
}

/// A number with the key's unit after it; words ("none", "the workload's") as they are.
template <typename Target>
std::string with_unit(const std::string& value, const Knob<Target>& knob) {
  double number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  const bool numeric = error == std::errc{} && end == value.data() + value.size();
  return numeric && !knob.unit.empty() ? value + " " + knob.unit : value;
}

template <typename Target>
std::string section_title(const KnobTable<Target>& table) {
  return (table.section.empty() ? "top level" : table.section) + ":";
}

/// Markdown table cells hold no pipes or line breaks.
std::string cell(const std::string& text) {
  std::string escaped;
  for (const char c : text) escaped += c == '|' ? std::string("\\|") : std::string(1, c);
  return escaped;
}

/// A table of options as a Markdown section.
void print_options_markdown(std::ostream& out, const OptionTable& table) {
  out << "\n### " << table.title << "\n\n"
      << table.meaning << " (`" << table.where << "`).\n\n"
      << "| Option | Type | Unit | Default | Range | Meaning |\n"
      << "|---|---|---|---|---|---|\n";
  for (const KnobOption& option : table.options) {
    out << "| `--" << option.key << "` | " << cell(option.type) << " | " << cell(option.unit)
        << " | " << cell(option.default_value) << " | " << cell(option.range) << " | "
        << cell(option.meaning) << " |\n";
  }
}

/// The tables of the options the command line and the Python package take.
void print_option_tables_markdown(std::ostream& out) {
  out << "\n## Command-line options\n\n"
      << "The same tables give each command's `--help`, its range checks and messages, train's\n"
      << "`run.json`, the PPO settings a checkpoint keeps, and the Python package's keyword\n"
      << "arguments (`-` as `_`). An option that several commands take is declared once\n"
      << "(`sim/io/shared_options.h`, or its component's table); only its default is each\n"
      << "command's own.\n";
  for (const OptionTable& table : option_tables()) print_options_markdown(out, table);
}

/// One table of keys as a Markdown section.
template <typename Target>
void print_table_markdown(std::ostream& out, const KnobTable<Target>& table) {
  out << "\n## " << (table.section.empty() ? "Top level" : "`" + table.section + ":`") << "\n\n"
      << table.meaning << ".\n\n"
      << "| Key | Type | Unit | Default | Range | Meaning | Source |\n"
      << "|---|---|---|---|---|---|---|\n";
  for (const Knob<Target>& knob : table.knobs) {
    out << "| `" << knob.key << "` | " << cell(knob.type) << " | " << cell(knob.unit) << " | "
        << cell(knob.default_value) << " | " << cell(range_text(knob)) << " | "
        << cell(knob.meaning) << " | " << cell(knob.source) << " |\n";
  }
}

/// The topology tables with their --set paths and an example of each shape.
void print_topology_markdown(std::ostream& out) {
  out << "\n## Topology\n\n"
      << "A scenario's `topology:` names a topology file (`topologies/`) or holds the same map "
         "inline.\n"
      << kTopologySetPaths
      << ". A value outside a key's typical range, though valid, prints one "
         "warning\n(`dynamix: warning: ...`); `--strict` on simulate, evaluate, sweep and train "
         "refuses it (exit 2).\n"
      << kTopologyExamples;
  for (const TopologyKnobTable& table : topology_knobs()) print_table_markdown(out, table);
}

/// The topology tables, without values: a topology's values are shown by its file.
void print_topology_configuration(std::ostream& out) {
  out << "topology keys: " << kTopologySetPaths << "\n";
  for (const TopologyKnobTable& table : topology_knobs()) {
    out << section_title(table) << " " << table.meaning << "\n";
    for (const TopologyKnob& knob : table.knobs) {
      out << "  " << knob.key << " = " << with_unit(knob.default_value, knob) << "  ("
          << range_text(knob) << ")\n      " << knob.meaning;
      if (!knob.source.empty()) out << " [" << knob.source << "]";
      out << "\n";
    }
  }
}

}  // namespace

void print_configuration(std::ostream& out, const ScenarioSpec* values) {
  for (const ScenarioKnobTable& table : scenario_knobs()) {
    out << section_title(table) << " " << table.meaning << "\n";
    for (const ScenarioKnob& knob : table.knobs) {
      out << "  " << knob.key << " = ";
      if (values != nullptr) {
        out << with_unit(knob.show(*values), knob) << "  (default "
            << with_unit(knob.default_value, knob) << "; " << range_text(knob) << ")\n";
      } else {
        out << with_unit(knob.default_value, knob) << "  (" << range_text(knob) << ")\n";
      }
      out << "      " << knob.meaning;
      if (!knob.source.empty()) out << " [" << knob.source << "]";
      out << "\n";
    }
  }
  print_topology_configuration(out);
  if (values == nullptr) return;
  // The topology's keys above are the reference; what this scenario resolves to is its document.
  out << "the scenario as resolved (its file, its topology file and every --set applied):\n";
  std::istringstream yaml(values->resolved.to_yaml());
  for (std::string line; std::getline(yaml, line);) out << "  " << line << "\n";
}

void print_configuration_markdown(std::ostream& out) {
  out << "# Configuration reference\n\n"
      << "Generated by `dynamix config --markdown > docs/configuration.md` from the knob tables "
         "in\n`sim/scenario/scenario_knobs.cpp`; do not edit by hand. Every key can be given in a "
         "scenario\nfile or on the command line as `--set KEY=VALUE` (which adds a section the "
         "file omits);\n`dynamix config --scenario S` shows the values a scenario resolves to.\n";
  for (const ScenarioKnobTable& table : scenario_knobs()) print_table_markdown(out, table);
  print_topology_markdown(out);
  print_option_tables_markdown(out);
}

int run_config(const std::vector<std::string>& args) {
  ConfigOptions o;
  if (parse_knob_command_line(args, config_knobs(), o)) return 0;
  const bool values = !o.scenario_path.empty() || !o.overrides.empty();
  if (o.markdown && (values || o.json)) {
    throw InputError("--markdown", 0, "", "no --scenario, --set or --json beside it", "one");
  }
  if (o.markdown) {
    print_configuration_markdown(std::cout);
    return 0;
  }
  if (!values) {
    if (o.json) {
      print_configuration_json(std::cout);
    } else {
      print_configuration(std::cout);
    }
    return 0;
  }
  if (o.scenario_path.empty()) o.scenario_path = kDefaultScenario;
  const ScenarioSpec spec = load_scenario(resolve_scenario(o.scenario_path), o.overrides).spec();
  if (o.json) {
    print_configuration_json(std::cout, &spec);
  } else {
    print_configuration(std::cout, &spec);
  }
  return 0;
}

}  // namespace dynamix
