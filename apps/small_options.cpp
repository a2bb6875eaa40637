// The small commands' options tables.
#include "apps/small_options.h"

#include "sim/io/shared_options.h"

namespace dynamix {

namespace {

template <typename Member>
auto field(Member member) {
  return [member](auto& options) -> auto& { return options.*member; };
}

KnobTable<ConfigOptions> make_config_knobs() {
  using Rows = KnobRows<ConfigOptions, ExactNumbers>;
  using Shared = SharedRows<ConfigOptions>;
  Knob<ConfigOptions> scenario = Shared::scenario(field(&ConfigOptions::scenario_path));
  // Without --scenario or --set, config lists the keys and their defaults, no scenario's values.
  scenario.default_value = "none";
  return Rows::table(
      "", "dynamix config: list every scenario key with its type, unit, default, range and meaning",
      {scenario, Shared::set(field(&ConfigOptions::overrides)),
       Rows::flag({.key = "markdown", .meaning = "print the reference page docs/configuration.md"},
                  field(&ConfigOptions::markdown)),
       Rows::flag({.key = "json",
                   .meaning = "print every key and option table as JSON (the report notebooks "
                              "read it), or with --scenario the scenario's values"},
                  field(&ConfigOptions::json))});
}

KnobTable<ScenariosOptions> make_scenarios_knobs() {
  using Rows = KnobRows<ScenariosOptions, ExactNumbers>;
  return Rows::table(
      "", "dynamix scenarios: list the built-in scenarios (use --scenario NAME with any command)",
      {Rows::flag({.key = "validation",
                   .meaning = "print the embedded paths of the held-out validation clusters "
                              "instead, one per line, smallest first (the set train --select-on "
                              "validation names)"},
                  field(&ScenariosOptions::validation)),
       Rows::flag({.key = "dynamic",
                   .meaning = "print the embedded paths of the dynamic clusters (stragglers with "
                              "precursors, co-located jobs: docs/dynamic.md) instead, one per "
                              "line, smallest first; with --validation their held-out set (the "
                              "set train --select-on dynamic-validation names)"},
                  field(&ScenariosOptions::dynamic)),
       Rows::flag({.key = "budget",
                   .meaning = "print the embedded paths of the epoch-budget training clusters "
                              "(static clusters where a batch grown far past the noise scale "
                              "runs out of epochs: docs/ppo.md) instead, one per line, smallest "
                              "first (the set train --train-on budget names)"},
                  field(&ScenariosOptions::budget))});
}

KnobTable<ExportOptions> make_export_knobs() {
  using Rows = KnobRows<ExportOptions, ExactNumbers>;
  return Rows::table("", "dynamix export: a checkpoint's policy as TorchScript policy.pt",
                     {Rows::text({.key = "checkpoint",
                                  .meaning = "checkpoint.pt written by dynamix train",
                                  .default_value = "required"},
                                 field(&ExportOptions::checkpoint)),
                      SharedRows<ExportOptions>::out(field(&ExportOptions::out))});
}

}  // namespace

const KnobTable<ConfigOptions>& config_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<ConfigOptions> table = make_config_knobs();
  return table;
}

const KnobTable<ScenariosOptions>& scenarios_knobs() {
  static const KnobTable<ScenariosOptions> table = make_scenarios_knobs();
  return table;
}

const KnobTable<ExportOptions>& export_knobs() {
  static const KnobTable<ExportOptions> table = make_export_knobs();
  return table;
}

}  // namespace dynamix
