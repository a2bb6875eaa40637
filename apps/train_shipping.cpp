// policy.pt of a selecting `dynamix train`: the best snapshot, or the fixed point.
#include "apps/train_shipping.h"

#include <algorithm>

#include "gym/rules.h"
#include "policies/baselines/baselines.h"
#include "policies/export/policy_snapshot.h"
#include "policies/export/torchscript_policy.h"
#include "studies/progress.h"

namespace dynamix {
namespace {

/// A selecting run's best snapshot, whether it ships or not.
constexpr const char* kBestSnapshot = "best_snapshot.pt";
/// Where the fixed point is written to be scored.
constexpr const char* kFixedPoint = "fixed_point.pt";

/// Scores the fixed point (the final snapshot's network with its output layer set to always take
/// the neutral action, in kFixedPoint) as the snapshots were scored, and judges the best
/// snapshot against it; no fixed point where the action base has none.
Shipped judge(const PpoTrainer& trainer, const RunDirectory& directory,
              const PolicySelection& selection) {
  const PolicySnapshot snapshot = trainer.policy_snapshot();
  const PolicyMetadata& metadata = snapshot.metadata;
  Shipped shipped;
  shipped.fixed_point = fixed_point_policy(metadata.action_base, metadata.actions);
  shipped.snapshot = *selection.best_score();
  shipped.best_rule_score = selection.best_rule_score();
  if (!shipped.fixed_point) return shipped;
  const std::size_t neutral = *neutral_action(metadata.action_base, metadata.actions);
  save_torchscript_policy(constant_action_snapshot(snapshot, neutral), directory.file(kFixedPoint));
  shipped.fixed_point_score = selection.score(directory.file(kFixedPoint));
  return shipped;
}

}  // namespace

/// The selection scenarios on which the episodes `score` holds missed the target.
std::vector<SelectionMiss> selection_misses(const SelectionScore& score,
                                            const PolicySelection& selection) {
  std::vector<SelectionMiss> misses;
  const auto seeds = static_cast<std::size_t>(selection.seeds());
  for (std::size_t s = 0; s < selection.scenarios(); ++s) {
    const SelectionScenario& scenario = selection.scenario_bests()[s];
    const auto first = score.reached.begin() + static_cast<std::ptrdiff_t>(s * seeds);
    const auto missed =
        static_cast<int>(std::count(first, first + static_cast<std::ptrdiff_t>(seeds), false));
    if (missed == 0) continue;
    misses.push_back({.scenario = scenario.name,
                      .missed = missed,
                      .episodes = static_cast<int>(seeds),
                      .best_rule = scenario.best_rule,
                      .best_rule_time_s = scenario.best_rule_time_s});
  }
  return misses;
}

/// The line train prints for a selection scenario `who` (policy.pt, or the fixed point) missed.
std::string miss_line(const std::string& who, const SelectionMiss& miss) {
  std::string line = "dynamix: " + who + " missed the target on " + miss.scenario + " in " +
                     std::to_string(miss.missed) + " of " + std::to_string(miss.episodes) +
                     " selection episodes; ";
  if (!miss.best_rule) return line + "no rule reached it on every seed there either";
  return line + "the best rule there, " + *miss.best_rule + ", reached it on every seed in " +
         format_rounded(miss.best_rule_time_s) + " s";
}

/// Writes policy.pt: the final policy; or with a selection the best snapshot it scored (the
/// final one included, in last_policy.pt; the best in best_snapshot.pt), unless the fixed point
/// did better there, which then ships instead. What shipped, with a selection.
std::optional<Shipped> write_shipped_policy(PpoTrainer& trainer, const RunDirectory& directory,
                                            PolicySelection* selection) {
  const std::filesystem::path policy = directory.file("policy.pt");
  if (!selection) {
    trainer.export_policy(policy);
    return std::nullopt;
  }
  const std::filesystem::path last = directory.file("last_policy.pt");
  trainer.export_policy(last);
  selection->consider(last, directory.file(kSelectedPolicy));
  const Shipped shipped = judge(trainer, directory, *selection);
  // Copies first, so that the kept snapshot survives until the run's files are complete.
  const auto overwrite = std::filesystem::copy_options::overwrite_existing;
  std::filesystem::copy_file(directory.file(kSelectedPolicy), directory.file(kBestSnapshot),
                             overwrite);
  if (shipped.fixed_point_ships()) {
    std::filesystem::rename(directory.file(kFixedPoint), policy);
  } else {
    std::filesystem::copy_file(directory.file(kSelectedPolicy), policy, overwrite);
    std::filesystem::remove(directory.file(kFixedPoint));
  }
  std::filesystem::remove(directory.file(kSelectedPolicy));
  return shipped;
}

/// The line that says what policy.pt is, for a selecting run.
std::string shipped_line(const Shipped& shipped, ActionBase base, std::size_t scenarios) {
  if (!shipped.fixed_point) {
    return "policy.pt: the best snapshot; the " + std::string(action_base_name(base)) +
           " action base has no fixed point to check it against";
  }
  const std::string fixed_point = format_rounded(shipped.fixed_point_score->score);
  const std::string snapshot = format_rounded(shipped.snapshot.score);
  const std::string best_rule = format_rounded(shipped.best_rule_score);
  const std::string on = " on " + std::to_string(scenarios) + " scenario(s)";
  if (!shipped.fixed_point_ships()) {
    return "policy.pt: the best snapshot (selection " + snapshot + " against the fixed point " +
           *shipped.fixed_point + "'s " + fixed_point + " and the best single rule's " + best_rule +
           on + ")";
  }
  std::string why;
  if (shipped.misses() > 0) {
    why = "; it missed the target in " + std::to_string(shipped.misses()) +
          " episode(s) the fixed point reached";
  } else if (!shipped.beats_every_rule() &&
             shipped.snapshot.score <= shipped.fixed_point_score->score) {
    why = "; it did not beat the best single rule's " + best_rule;
  }
  return "policy.pt: the fixed point " + *shipped.fixed_point + " (selection " + fixed_point +
         " against the best snapshot's " + snapshot + on + why + "); the best snapshot is in " +
         kBestSnapshot;
}

/// Under the rule base with a selection: moves the best rule that reached the target in every
/// selection episode to the front of the action set, where it is the neutral action (the anchor
/// and fixed point). What was chosen, for the output; nothing under the other bases.
std::optional<std::string> anchor_on_best_rule(EnvOptions& env, const PolicySelection* selection) {
  if (env.action_base != ActionBase::kRule || selection == nullptr) return std::nullopt;
  std::vector<std::string_view> candidates;
  for (int action : env.actions) {
    candidates.push_back(kSelectableRules[static_cast<std::size_t>(action)]);
  }
  const std::optional<std::string> best = selection->best_reaching_rule(candidates);
  if (!best) {
    return "anchor: " + std::string(candidates.front()) +
           " (no rule of the action set reached the target in every selection episode)";
  }
  const auto first = std::find(env.actions.begin(), env.actions.end(), *selectable_rule(*best));
  std::rotate(env.actions.begin(), first, first + 1);
  const auto standing = std::find_if(selection->rules().begin(), selection->rules().end(),
                                     [&](const RuleStanding& rule) { return rule.rule == *best; });
  return "anchor: " + *best + ", the best rule that reached the target in every selection " +
         "episode (selection " + format_rounded(standing->score.score) + ")";
}

}  // namespace dynamix
