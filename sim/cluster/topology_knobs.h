// Every key of a topology document (explicit nodes, switches and links, or a generated fabric),
// declared once: type, unit, range, default, meaning, source and typical range. The hand-written
// readers in topology.cpp and fabric_generator.cpp take their accepted keys and plausibility
// checks from these rows; `dynamix config` and docs/configuration.md list them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/io/knobs.h"

namespace dynamix {

class ConfigNode;
class Diagnostics;

/// The rows describe keys only: the topology readers keep the values (a Topology, a FabricShape).
struct TopologyKeys {};

using TopologyKnob = Knob<TopologyKeys>;
using TopologyKnobTable = KnobTable<TopologyKeys>;

/// The tables: topology, topology.nodes[], topology.switches[], topology.links[],
/// topology.fabric, topology.fabric.groups[].
const std::vector<TopologyKnobTable>& topology_knobs();

/// The table of `section` ("topology.nodes[]"); the section must exist.
const TopologyKnobTable& topology_table(std::string_view section);

/// The keys a map of `section` accepts below `prefix` ("" for the section's own map, "link" for a
/// node's link map): "link.to" gives "link" at the top and "to" below "link".
std::vector<std::string> accepted_keys(std::string_view section, std::string_view prefix = {});

/// Tells `diagnostics` of each key of `map` whose row in `section` (below `prefix`) has a
/// typical range its value lies outside.
void check_typical_values(const ConfigNode& map, std::string_view section, Diagnostics& diagnostics,
                          std::string_view prefix = {});

}  // namespace dynamix
