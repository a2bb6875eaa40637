// The environment's options table.
#include "gym/env_knobs.h"

#include <array>
#include <cmath>
#include <limits>

#include "sim/io/input_error.h"

namespace dynamix {

namespace {

using Rows = KnobRows<EnvOptions, ExactNumbers>;
using Row = Knob<EnvOptions>;

constexpr int kMaxBatch = std::numeric_limits<int>::max();

template <typename Member>
auto field(Member member) {
  return [member](auto& options) -> auto& { return options.*member; };
}

Row action_base_knob() {
  std::vector<std::pair<std::string, ActionBase>> words;
  words.reserve(kActionBases.size());
  for (const ActionBase base : kActionBases) words.emplace_back(action_base_name(base), base);
  return Rows::choice<ActionBase>(
      {.key = "action-base",
       .meaning = "what actions change: current (each worker's batch), balanced (its "
                  "speed-proportional share of the global batch), global (the global batch, in "
                  "percent), noise (the global batch as a percentage of the gradient noise "
                  "scale), goodput (as a percentage of the goodput-optimal global batch), "
                  "goodput-steady (as goodput, but held at the current global batch while its "
                  "goodput is within 5% of the optimum's) or rule (which hand-made rule decides "
                  "the next window, its split included); global, noise and the goodput bases "
                  "split by speed"},
      field(&EnvOptions::action_base), std::move(words), "action base");
}

/// A guard rail's factor: 0 (none), or a finite factor of at least 1.
Row change_bound_knob(const char* key, const char* meaning, double EnvOptions::*member) {
  Row knob = Rows::described({.key = key, .meaning = meaning}, "number",
                             "0 (none) or a finite factor >= 1");
  const auto valid = [](double change) {
    return change == 0 || (change >= 1 && std::isfinite(change));
  };
  knob.parse = [valid, member](const std::string& text, EnvOptions& options) -> KnobParse {
    const std::optional<double> change = parse_number(text);
    if (!change) return {KnobParse::Outcome::kMalformed};
    if (!valid(*change)) return {KnobParse::Outcome::kOutOfRange, exact_number(*change)};
    options.*member = *change;
    return {};
  };
  knob.violation = [valid, member](const EnvOptions& options) -> std::optional<std::string> {
    if (valid(options.*member)) return std::nullopt;
    return exact_number(options.*member);
  };
  knob.show = [member](const EnvOptions& options) { return exact_number(options.*member); };
  knob.write = [member](JsonWriter& json, const EnvOptions& options) {
    json.value(options.*member);
  };
  return knob;
}

KnobTable<EnvOptions> make_env_knobs() {
  return Rows::table(
      "", "the batch-size environment",
      {decision_interval_knob<EnvOptions>(field(&EnvOptions::decision_interval)),
       Rows::quantity({.key = "decision-lag",
                       .meaning = "windows between a decision and the window it applies to: 0 (an "
                                  "instant arbitrator) or 1 (a job steered by dynamix serve)"},
                      field(&EnvOptions::decision_lag), integers(0, 1)),
       change_bound_knob("max-batch-change",
                         "dynamix serve's guard rail: each decision's global batch bounded to "
                         "[G/c, G*c] of the last window's G (0: none, in the simulator only)",
                         &EnvOptions::max_batch_change),
       change_bound_knob("max-lr-change",
                         "dynamix serve's guard rail: the LR factor a decision brings in bounded "
                         "to [f/c, f*c] of the factor f in force when it was decided (0: none, in "
                         "the simulator only)",
                         &EnvOptions::max_lr_change),
       action_base_knob(),
       Rows::integer_list({.key = "actions",
                           .meaning = "change per discrete action (samples, or percent for the "
                                      "global, noise and goodput bases; for the rule base, "
                                      "the numbers of docs/ppo.md#the-rule-base, anchor first)",
                           .default_value = "the action base's"},
                          field(&EnvOptions::actions),
                          integers(std::numeric_limits<int>::min(), kMaxBatch),
                          std::numeric_limits<std::size_t>::max()),
       Rows::quantity(
           {.key = "min-batch", .unit = "samples", .meaning = "smallest batch a worker gets"},
           field(&EnvOptions::min_batch), integers(1, kMaxBatch)),
       Rows::quantity({.key = "max-batch",
                       .unit = "samples",
                       .meaning = "largest batch a worker gets (also clamped to its memory)"},
                      field(&EnvOptions::max_batch), integers(1, kMaxBatch)),
       Rows::quantity({.key = "initial-batch",
                       .unit = "samples",
                       .meaning = "batch every worker starts an episode from, adaptive policies' "
                                  "start (0: the scenario's batch_size; static and schedule "
                                  "policies start at their own)"},
                      field(&EnvOptions::initial_batch), integers(0, kMaxBatch)),
       Rows::flag({.key = "stop-at-target",
                   .meaning = "end the episode when the target accuracy is reached"},
                  field(&EnvOptions::stop_at_target))});
}

}  // namespace

const KnobTable<EnvOptions>& env_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const KnobTable<EnvOptions> table = make_env_knobs();
  return table;
}

void validate(const EnvOptions& options) {
  if (const auto refused = first_violation(env_knobs(), options)) {
    throw InputError("--" + refused->key, 0, "", refused->expected, refused->found);
  }
}

EnvOptions evaluation_env_options() {
  return {.decision_interval = 10, .action_base = ActionBase::kBalanced};
}

EnvOptions training_env_options() {
  EnvOptions options;
  options.reward.shaping_discount = kTrainingDiscount;
  options.reward.shaping_discount_by_time = true;
  return options;
}

namespace {

constexpr std::array kEnvPresets = {
    EnvPreset{"training", "what dynamix train and Python's make_env learn in",
              &training_env_options},
    EnvPreset{"evaluation",
              "what evaluate, simulate, sweep, the oracle, serve and train's selection run "
              "policies in",
              &evaluation_env_options},
};

}  // namespace

std::span<const EnvPreset> env_presets() { return kEnvPresets; }

EnvOptions env_preset(std::string_view name, const std::string& option) {
  std::string names;
  for (const EnvPreset& preset : kEnvPresets) {
    if (preset.name == name) return preset.options();
    names += (names.empty() ? "" : ", ") + std::string(preset.name);
  }
  throw InputError(option, 0, "", "one of " + names, "'" + std::string(name) + "'");
}

}  // namespace dynamix
