// What a worker's action does: a change added to its current batch (DYNAMIX), a change added to
// its speed-balanced share of the cluster's global batch, or a change of the global batch itself.
#pragma once

#include <array>
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
  /// G' = G·Π(1 + Δ_i/100)^(1/P), b_i ← G'·v_i/Σv: each action is a change of the global batch
  /// in percent, the workers' choices meet in their geometric mean, and the split stays
  /// speed-balanced. One action scales every cluster size alike (docs/ppo.md).
  kGlobal,
  /// G' = B_noise·Π(Δ_i/100)^(1/P), b_i ← G'·v_i/Σv: each action sets the global batch to a
  /// percentage of the gradient noise scale B_noise measured over the last window (the current
  /// global batch while it is unmeasured), a quantity free of the cluster's size; split by speed.
  kNoise,
  /// G' = G*·Π(Δ_i/100)^(1/P), b_i ← G'·v_i/Σv: each action sets the global batch to a
  /// percentage of the goodput-optimal one, G* = √(B_noise·c·S) (goodput_optimal_batch), which
  /// the last window measures; split by speed. The neutral action (100%) holds G at that optimum.
  kGoodput,
  /// As kGoodput, but the anchor stays at the current global batch G while G's goodput is within
  /// 5% of G*'s (goodput_within), the hysteresis of Pollux's rule: the neutral action changes the
  /// batch only for a real gain, not for every swing of a noisy B_noise estimate.
  kGoodputSteady,
  /// Each action picks the hand-made rule that decides the next window (gym/rules.h: its number
  /// in kSelectableRules), per-worker split included: the workers' choices meet in the most
  /// common one, and every rule sees every window, so that a rule picked later decides on
  /// everything measured so far. The first action is the neutral one (the anchor rule).
  kRule,
};

/// Every base, in the order help texts list them.
inline constexpr std::array<ActionBase, 7> kActionBases = {
    ActionBase::kCurrent, ActionBase::kBalanced,      ActionBase::kGlobal, ActionBase::kNoise,
    ActionBase::kGoodput, ActionBase::kGoodputSteady, ActionBase::kRule};

/// "current", "balanced", "global", "noise", "goodput", "goodput-steady" or "rule".
std::string_view action_base_name(ActionBase base);
/// The ActionBase named `name`; nullopt for any other text.
std::optional<ActionBase> parse_action_base(std::string_view name);
/// Every name, for error messages and help texts.
std::string action_base_names();
/// Whether `base` sets the global batch as a percentage of the goodput-optimal one.
constexpr bool anchors_on_goodput(ActionBase base) {
  return base == ActionBase::kGoodput || base == ActionBase::kGoodputSteady;
}
/// Whether `base` sets the global batch as a percentage of a measured anchor: the noise scale or
/// the goodput optimum.
constexpr bool has_anchor(ActionBase base) {
  return base == ActionBase::kNoise || anchors_on_goodput(base);
}
/// Whether the workers' actions under `base` meet in one change of the global batch (global and
/// the anchored bases) rather than each moving its own batch.
constexpr bool shares_one_action(ActionBase base) {
  return base == ActionBase::kGlobal || has_anchor(base) || base == ActionBase::kRule;
}
/// The default action set of `base`: batch changes in samples, for kGlobal changes of the
/// global batch in percent, for kNoise percentages of the noise scale, for kGoodput percentages
/// of the goodput-optimal global batch, for kRule every selectable rule (goodput:100 first).
std::vector<int> default_actions(ActionBase base);
/// What the actions of `base` must be, for error messages ("" when any integer will do).
std::string action_rule(ActionBase base);
/// The first action `base` cannot take (a global change of -100% or less, a noise-scale
/// or goodput percentage <= 0, a number that names no selectable rule), if any.
std::optional<int> invalid_action(ActionBase base, std::span<const int> actions);
/// The index of the action that keeps things as they are (a change of 0; for kNoise the middle
/// of the set; for kGoodput 100%, else the middle; for kRule the first), if the set has one: what
/// an untrained policy favours and departures are counted from.
std::optional<std::size_t> neutral_action(ActionBase base, std::span<const int> actions);

/// The batch each worker asks for when it takes action `chosen[i]` of `actions` under `base`,
/// given the batches it ran in `window` (`current`), into `out` (not yet clamped to any bound).
/// The balanced and global bases fall back to the current batches when the window lacks a
/// positive speed for every worker (a window from another cluster, or one without
/// measurements). Not for kRule, whose rules keep state between windows (RuleBook).
void requested_batches(ActionBase base, std::span<const int> actions, const WindowMetrics& window,
                       std::span<const int> current, std::span<const int> chosen,
                       std::vector<long long>& out);

}  // namespace dynamix
