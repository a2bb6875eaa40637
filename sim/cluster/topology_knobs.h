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

/// The ranges both the readers check (read_in) and the rows state, so that a message and the
/// reference say the same words.
struct TopologyRanges {
  /// A link's line rate: below 1 Mb/s or with more than a second of latency one iteration's
  /// simulated time would pass what int64 nanoseconds hold; above 1 Pb/s is a typo.
  static constexpr Range kLinkGbps{.low = 1e-3, .high = 1e6};
  static constexpr Range kLinkLatencyUs{.low = 0, .high = 1e6};
  /// A node group's or a switch group's count.
  static constexpr Range kGroupCount{.low = 1, .high = 1 << 20, .integer = true};
  /// A node's GPUs (at least one where it names a gpu) and CPU cores.
  static constexpr Range kNodeGpus{.low = 0, .high = 1024, .integer = true};
  static constexpr std::string_view kWithGpu = ", >= 1 with a gpu";
  static constexpr Range kGpusPerNode{.low = 1, .high = 1024, .integer = true};
  static constexpr Range kCpuCores{.low = 1, .high = 1 << 16, .integer = true};
  /// A generated fabric's nodes, in all and per group: its document must fit
  /// ConfigNode::kMaxValues.
  static constexpr Range kFabricNodes{.low = 1, .high = 1 << 16, .integer = true};
  static constexpr Range kHostsPerLeaf{.low = 1, .high = 4096, .integer = true};
  static constexpr Range kSpines{.low = 1, .high = 1024, .integer = true};
  /// A fabric group's share of the nodes.
  static constexpr std::string_view kGroupShare = "a number in (0, 1], shares summing to 1";
  /// A fat-tree's switch radix.
  static constexpr std::string_view kRadix = "an even integer in [2, 256]";
};

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
