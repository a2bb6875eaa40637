// The environment's options, declared once: the table `dynamix train`, the Python package and
// the tests read the options' keys, ranges and defaults (EnvOptions{}) from.
#pragma once

#include "gym/batch_size_env.h"
#include "sim/io/knobs.h"

namespace dynamix {

/// Largest decision interval an environment or a policy file may hold.
inline constexpr int kMaxDecisionInterval = 1 << 20;

/// One row per option of EnvOptions but the reward's (RewardOptions, set by the trainer), keyed
/// as the command line spells it ("decision-interval"; Python: decision_interval), defaults from
/// EnvOptions{}.
const KnobTable<EnvOptions>& env_knobs();

/// InputError naming the first option outside its range ("--decision-interval: expected an
/// integer in [1, 1048576], found 0").
void validate(const EnvOptions& options);

/// The environment the evaluation commands (evaluate, simulate, the oracle, serve and train's
/// policy selection) run heuristics in: decisions every 10 iterations, the window of their
/// outputs and goldens, on the balanced base.
EnvOptions evaluation_env_options();

}  // namespace dynamix
