// Values inside their hard range but outside where they usually lie: warned about once each on
// stderr, or refused under --strict.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/io/config_node.h"
#include "sim/io/knobs.h"

namespace dynamix {

/// Whether implausible values are refused (InputError) instead of warned about.
void set_strict_plausibility(bool strict);
bool strict_plausibility();

/// Warns, or under --strict fails, when the number under `key` of `section` lies outside
/// `typical`; a warning already printed in this run is not printed again.
void check_typical(const ConfigNode& section, std::string_view key, const std::string& unit,
                   const Typical& typical);

/// The warnings printed so far in this run, in order (what tests and a summary may read).
std::vector<std::string> printed_warnings();

}  // namespace dynamix
