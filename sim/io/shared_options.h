// The options that more than one table takes, each declared here once: its key, meaning, range
// and whether a run's record holds it. A command's or a component's table builds the row over its
// own field from these builders, so that a key reads, ranges and means the same on every command
// line (tests/apps/option_registry_test.cpp checks that no key is declared twice). The defaults
// are the command's own, from its options struct: a preset's values, not a second declaration.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "sim/io/knobs.h"

namespace dynamix {

/// Most seeds an evaluation of a training run's policy takes.
inline constexpr std::int64_t kMaxEvalSeeds = 100000;
/// Most threads a command runs its episodes on.
inline constexpr std::int64_t kMaxJobs = 1024;

/// The builders of the shared rows over `Target`'s fields.
template <typename Target>
struct SharedRows {
  using Rows = KnobRows<Target, ExactNumbers>;
  using Row = Knob<Target>;

  /// --scenario: a list field takes it repeated (commands that compare scenarios), a text field
  /// once; `default_value` as --help shows it.
  template <typename Access>
  static Row scenario(Access access, std::string default_value = "quickstart") {
    KnobText text{.key = "scenario",
                  .meaning = "scenario YAML file or built-in name (dynamix scenarios)",
                  .default_value = std::move(default_value)};
    using Field = std::remove_cvref_t<decltype(access(std::declval<Target&>()))>;
    if constexpr (std::is_same_v<Field, std::vector<std::string>>) {
      return Rows::texts(std::move(text), access);
    } else {
      return Rows::text(std::move(text), access);
    }
  }

  template <typename Access>
  static Row set(Access access) {
    return Rows::texts({.key = "set",
                        .meaning = "override a scenario value (in every scenario and cell): "
                                   "dotted.key=VALUE"},
                       access);
  }

  /// The root seed: of a training run, or the first of --seeds consecutive seeds.
  static KnobText seed_text() {
    return {.key = "seed",
            .meaning = "root seed; a command that runs --seeds N runs seeds SEED to SEED+N-1"};
  }

  /// `default_value`: said where the field's default is none ("the scenario's").
  template <typename Access>
  static Row seed(Access access, std::string default_value = {}) {
    KnobText text = seed_text();
    text.default_value = std::move(default_value);
    return Rows::quantity(std::move(text), access, integers(0));
  }

  template <typename Access>
  static Row seeds(Access access) {
    return Rows::quantity({.key = "seeds",
                           .meaning = "how many seeds: per scenario and policy, or (band make) "
                                      "training runs, seeded 1..N"},
                          access, integers(1));
  }

  /// Seeds of each evaluation of a training run's greedy policy (train, band make).
  template <typename Access>
  static Row eval_seeds(Access access) {
    return Rows::quantity(
        {.key = "eval-seeds",
         .meaning = "seeds per evaluation of the greedy policy (band make: the evaluation that "
                    "measures its departure share)"},
        access, integers(1, kMaxEvalSeeds));
  }

  template <typename Access>
  static Row jobs(Access access) {
    return Rows::quantity({.key = "jobs",
                           .meaning = "episodes run at once, on threads (per rank under "
                                      "mpirun); results do not depend on it",
                           .default_value = "one per core",
                           .recorded = false},
                          access, integers(1, kMaxJobs));
  }

  template <typename Access>
  static Row resume(Access access) {
    return Rows::flag({.key = "resume",
                       .meaning = "continue the interrupted run in OUT.partial (the same "
                                  "options); without it OUT.partial is started afresh",
                       .recorded = false},
                      access);
  }

  template <typename Access>
  static Row quiet(Access access) {
    return Rows::flag({.key = "quiet", .meaning = "print no progress on stderr", .recorded = false},
                      access);
  }

  /// --strict, for commands that load scenarios: a value outside its key's typical range (a
  /// likely unit slip) is an error (exit 2) instead of a warning.
  template <typename Access>
  static Row strict(Access access) {
    return Rows::flag(
        {.key = "strict",
         .meaning = "refuse implausible values (outside a key's typical range, e.g. a bandwidth "
                    "in Mb/s given as Gb/s) instead of warning about them",
         .recorded = false},
        access);
  }

  template <typename Access>
  static Row out(Access access) {
    return Rows::text(
        {.key = "out",
         .meaning =
             "where to write: the run directory (export: the policy file; band make: the band "
             "file)",
         .default_value = "required",
         .recorded = false},
        access);
  }

  /// --policies, a list of the policy names `names` says (evaluate and sweep).
  template <typename Access>
  static Row policies(Access access, const std::string& names) {
    return Rows::text({.key = "policies",
                       .meaning = "comma-separated policies (evaluate: each POLICY or "
                                  "LABEL=POLICY, ppo:PATH labelled by its file's stem): " +
                                  names},
                      access);
  }

  /// --policy, the one policy that decides (simulate, serve, replay).
  template <typename Access>
  static Row policy(Access access, const std::string& names, std::string default_value = {}) {
    return Rows::text({.key = "policy",
                       .meaning = "the policy that decides, every k iterations: " + names +
                                  "; serve and replay take a policy.pt or one that chooses "
                                  "batches itself",
                       .default_value = std::move(default_value)},
                      access);
  }

  /// The words of `knob`'s declaration, for a row of the same key over a field of another
  /// struct (simulate's --stop-at-target over its own flag).
  template <typename Part>
  static KnobText words_of(const Knob<Part>& knob) {
    return {.key = knob.key, .unit = knob.unit, .meaning = knob.meaning, .source = knob.source};
  }

  /// A row of a component's table (the environment's, PPO's) over the part of `Target` it
  /// configures; its default is the command's own, shown from the command's options struct.
  template <typename Part, typename Access>
  static Row part(const KnobTable<Part>& table, const std::string& key, Access access) {
    const Knob<Part>* knob = find_knob(table, key);
    if (knob == nullptr) throw std::logic_error("no option '" + key + "' in " + table.meaning);
    Row row = rebased<Target>(*knob, access);
    row.default_value.clear();
    return row;
  }
};

}  // namespace dynamix
