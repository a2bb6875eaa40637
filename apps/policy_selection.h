// Selection of a training run's policy on held-out scenarios: the greedy policy exported at each
// evaluation is scored against the heuristics there, and the best one is kept.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gym/batch_size_env.h"
#include "studies/evaluation.h"

namespace dynamix {

/// A policy's score on the selection scenarios, and which of its episodes reached the target.
struct SelectionScore {
  /// The geometric mean over the scenarios of its score over the best heuristic's there.
  double score = 0;
  /// Per scenario, then per seed: whether the episode reached the target.
  std::vector<bool> reached;
};

/// A baseline rule's standing on the selection scenarios, scored as learned policies are.
struct RuleStanding {
  std::string rule;
  SelectionScore score;
  /// Episodes it missed (every scenario and seed).
  int misses = 0;
};

/// A scenario of the selection: its name and the fastest rule there that reached the target on
/// every seed (the per-scenario best rule), if one did.
struct SelectionScenario {
  std::string name;
  std::optional<std::string> best_rule;
  /// The best rule's mean time to target, simulated seconds.
  double best_rule_time_s = 0;
};

/// The episodes `policy` missed that `reference`, run on the same scenarios and seeds, reached.
int misses_beside(const SelectionScore& policy, const SelectionScore& reference);
/// Whether shipping `policy` rather than `fixed_point` does harm: it scores worse (higher), or
/// misses the target in an episode the fixed point reached. A tie does none.
bool does_harm(const SelectionScore& policy, const SelectionScore& fixed_point);

class PolicySelection {
 public:
  /// Runs every adaptive rule (kSelectionRules) once on every scenario (`seeds` seeds from
  /// kSelectionSeed, at kEvaluationInitialBatch as `dynamix evaluate` starts them); `env` gives
  /// the learned policies' environment (decision interval, bounds). Episodes run on `threads`
  /// threads (0: one per core); the scores do not depend on how many.
  /// `observer` sees every iteration of the rules' episodes (to stop them on an interrupt by
  /// throwing).
  PolicySelection(std::vector<std::shared_ptr<const Scenario>> scenarios, const EnvOptions& env,
                  int seeds, std::size_t threads = 1, const IterationObserver& observer = {});

  /// The reach-aware score of the policy in `file` (lower is better): the geometric mean over
  /// the scenarios of its score over the per-scenario best rule's there, both as `dynamix
  /// evaluate` ranks them (a miss on any seed counts as the scenario's miss time).
  SelectionScore score(const std::filesystem::path& file) const;
  /// Scores `file` and keeps a copy of it as `keep` when the score is the best so far (or is
  /// the first); true if it was.
  bool consider(const std::filesystem::path& file, const std::filesystem::path& keep);
  /// The best score so far; nullopt before the first.
  std::optional<double> best() const { return best_ ? std::optional(best_->score) : std::nullopt; }
  /// The best policy's score and episodes; nullopt before the first.
  const std::optional<SelectionScore>& best_score() const { return best_; }
  /// The score of the last policy considered.
  std::optional<double> last() const { return last_; }
  std::size_t scenarios() const { return scenarios_.size(); }
  int seeds() const { return seeds_; }
  const std::vector<SelectionScenario>& scenario_bests() const { return bests_; }
  /// Every rule's standing, in kSelectionRules' order.
  const std::vector<RuleStanding>& rules() const { return rules_; }
  /// The rule with the best score that missed no episode, among `candidates` (every rule when
  /// empty); nullopt when each of them missed somewhere.
  std::optional<std::string> best_reaching_rule(
      std::span<const std::string_view> candidates = {}) const;
  /// The best score any single rule reached, misses counted at the miss time.
  double best_rule_score() const;

  /// The rules selection compares with: every selectable rule (gym/rules.h) and gns.
  static std::vector<std::string> selection_rules();

  /// Seeds differ from `dynamix evaluate`'s (from 1000), so that selection and report never
  /// share an episode.
  static constexpr std::uint64_t kSelectionSeed = 5000;

 private:
  std::vector<std::shared_ptr<const Scenario>> scenarios_;
  EnvOptions env_;
  int seeds_;
  std::size_t threads_;
  /// The rules' episodes, per scenario.
  std::vector<std::vector<EpisodeResult>> references_;
  std::vector<SelectionScenario> bests_;
  std::vector<RuleStanding> rules_;
  std::optional<SelectionScore> best_;
  std::optional<double> last_;
};

}  // namespace dynamix
