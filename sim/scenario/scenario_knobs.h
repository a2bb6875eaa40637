// Every key of a scenario file, declared once: its type, unit, range, default, meaning and
// source. The tables drive parsing, range checks, --set, error messages, `dynamix config` and
// docs/configuration.md.
#pragma once

#include <vector>

#include "sim/io/knobs.h"

namespace dynamix {

struct ScenarioSpec;

/// One key of a scenario file.
using ScenarioKnob = Knob<ScenarioSpec>;
/// The keys of one section of a scenario file ("" for the top level); `complete` sets what
/// depends on other keys of the section when they are absent (the LR rule follows the optimizer,
/// the target and budget follow the workload).
using ScenarioKnobTable = KnobTable<ScenarioSpec>;

/// The tables of the scenario file: top level, training, sync, network, variability,
/// preemption.
const std::vector<ScenarioKnobTable>& scenario_knobs();

}  // namespace dynamix
