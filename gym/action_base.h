// What a worker's batch change is added to: its current batch (DYNAMIX), or its speed-balanced
// share of the cluster's global batch.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gym/window_metrics.h"

namespace dynamix {

enum class ActionBase {
  /// b_i ← b_i + Δ_i: the action set of the DYNAMIX paper.
  kCurrent,
  /// b_i ← G·v_i/Σv + Δ_i, with G = Σ b the global batch and v_i the samples per second worker i
  /// computed over the last window: holding every worker splits the global batch as LB-BSP does
  /// (compute times meet at the barrier), and changes move the global batch and the split away
  /// from that balance.
  kBalanced,
};

/// "current" or "balanced".
std::string_view action_base_name(ActionBase base);
/// The ActionBase named `name`; nullopt for any other text.
std::optional<ActionBase> parse_action_base(std::string_view name);
/// Both names, for error messages and help texts.
std::string action_base_names();

/// The batch each worker's change applies to, given the batches it ran in `window` (`current`),
/// into `out`. kBalanced falls back to `current` when the window lacks a positive speed for
/// every worker (a window from another cluster, or one without measurements).
void action_bases(ActionBase base, const WindowMetrics& window, std::span<const int> current,
                  std::vector<int>& out);

}  // namespace dynamix
