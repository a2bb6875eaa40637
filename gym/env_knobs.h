// The environment's options, declared once: the table `dynamix train`, the Python package and
// the tests read the options' keys, ranges and defaults (EnvOptions{}) from.
#pragma once

#include <span>
#include <string_view>

#include "gym/batch_size_env.h"
#include "sim/io/knobs.h"

namespace dynamix {

/// Largest decision interval an environment or a policy file may hold.
inline constexpr int kMaxDecisionInterval = 1 << 20;

/// --decision-interval, declared once, over `Target`'s field: the environment's, or a command's
/// own (evaluate's optional one, whose absence means a learned policy's own interval).
template <typename Target, typename Access>
Knob<Target> decision_interval_knob(Access access, std::string default_value = {}) {
  return KnobRows<Target, ExactNumbers>::quantity(
      {.key = "decision-interval",
       .meaning = "iterations between decisions, k (a ppo:PATH policy's own unless given); also "
                  "the window of the per-window outputs",
       .default_value = std::move(default_value)},
      access, integers(1, kMaxDecisionInterval));
}

/// One row per option of EnvOptions but the reward's (RewardOptions, set by the trainer), keyed
/// as the command line spells it ("decision-interval"; Python: decision_interval), defaults from
/// EnvOptions{}.
const KnobTable<EnvOptions>& env_knobs();

/// InputError naming the first option outside its range ("--decision-interval: expected an
/// integer in [1, 1048576], found 0").
void validate(const EnvOptions& options);

/// The environment the evaluation commands (evaluate, simulate, the oracle, sweep, serve and
/// train's policy selection) run policies in: decisions every 10 iterations, the window of their
/// outputs and goldens, on the balanced base. The preset "evaluation".
EnvOptions evaluation_env_options();

/// The discount of the training preset's reward shaping: PPO's default γ (PpoOptions::gamma), per
/// reference window of simulated time.
inline constexpr double kTrainingDiscount = 0.999;

/// What `dynamix train` and the Python package's make_env learn in: EnvOptions{} (k = 20 on the
/// goodput base) with the reward's shaping discounted as the learner discounts, by PPO's default
/// γ per unit of time. The preset "training".
EnvOptions training_env_options();

/// An environment the entry points start from, chosen by name.
struct EnvPreset {
  const char* name;
  /// Who starts from it.
  const char* meaning;
  EnvOptions (*options)();
};

/// "training" and "evaluation".
std::span<const EnvPreset> env_presets();

/// The options of the preset `name`; InputError naming `option` for any other name.
EnvOptions env_preset(std::string_view name, const std::string& option = "preset");

}  // namespace dynamix
