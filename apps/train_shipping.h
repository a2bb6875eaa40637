// What a selecting `dynamix train` ships as policy.pt (docs/ppo.md#do-no-harm): the best snapshot
// or the fixed point, the line that says which and why, and the selection scenarios it missed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "apps/policy_selection.h"
#include "gym/action_base.h"
#include "gym/batch_size_env.h"
#include "policies/ppo/ppo_trainer.h"
#include "studies/run_directory.h"

namespace dynamix {

/// Where a selecting run keeps its best policy until it ends.
inline constexpr const char* kSelectedPolicy = "selected_policy.pt";

/// What a selecting run shipped as policy.pt, and why (docs/ppo.md#do-no-harm).
struct Shipped {
  /// The baseline the fixed point decides as ("goodput:100"); nullopt where the action base has
  /// none.
  std::optional<std::string> fixed_point;
  /// The best snapshot's selection score and episodes.
  SelectionScore snapshot;
  /// The fixed point's, on the same scenarios and seeds.
  std::optional<SelectionScore> fixed_point_score;
  /// The best score any single rule reached there (PolicySelection::best_rule_score).
  double best_rule_score = 0;

  /// Episodes the best snapshot missed that the fixed point reached.
  int misses() const { return fixed_point_score ? misses_beside(snapshot, *fixed_point_score) : 0; }
  /// Whether the best snapshot beat every single rule on the selection scenarios.
  bool beats_every_rule() const { return snapshot.score < best_rule_score; }
  /// True when policy.pt is the fixed point: the best snapshot did not beat every single rule,
  /// or scored worse than the fixed point, or missed where the fixed point reached.
  bool fixed_point_ships() const {
    return fixed_point_score && (does_harm(snapshot, *fixed_point_score) || !beats_every_rule());
  }
  /// The selection episodes of what policy.pt is.
  const SelectionScore& shipped_score() const {
    return fixed_point_ships() ? *fixed_point_score : snapshot;
  }
};

/// A selection scenario on which policy.pt missed the target.
struct SelectionMiss {
  std::string scenario;
  int missed = 0;
  int episodes = 0;
  std::optional<std::string> best_rule;
  double best_rule_time_s = 0;
};

/// The selection scenarios on which the episodes `score` holds missed the target.
std::vector<SelectionMiss> selection_misses(const SelectionScore& score,
                                            const PolicySelection& selection);

/// The line train prints for a selection scenario `who` (policy.pt, or the fixed point) missed.
std::string miss_line(const std::string& who, const SelectionMiss& miss);

/// Writes policy.pt: the final policy; or with a selection the best snapshot it scored (the
/// final one included, in last_policy.pt; the best in best_snapshot.pt), unless the fixed point
/// did better there, which then ships instead. What shipped, with a selection.
std::optional<Shipped> write_shipped_policy(PpoTrainer& trainer, const RunDirectory& directory,
                                            PolicySelection* selection);

/// The line that says what policy.pt is, for a selecting run.
std::string shipped_line(const Shipped& shipped, ActionBase base, std::size_t scenarios);

/// Under the rule base with a selection: moves the best rule that reached the target in every
/// selection episode to the front of the action set, where it is the neutral action (the anchor
/// and fixed point). What was chosen, for the output; nothing under the other bases.
std::optional<std::string> anchor_on_best_rule(EnvOptions& env, const PolicySelection* selection);

}  // namespace dynamix
