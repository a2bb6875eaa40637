// Selection of a training run's policy on held-out scenarios: the greedy policy exported at each
// evaluation is scored against the heuristics there, and the best one is kept.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "studies/evaluation.h"

namespace dynamix {

class PolicySelection {
 public:
  /// Runs the heuristic baselines once on every scenario (`seeds` seeds from kSelectionSeed, at
  /// kEvaluationInitialBatch as `dynamix evaluate` starts them); `env` gives the learned
  /// policies' environment (decision interval, bounds).
  PolicySelection(std::vector<std::shared_ptr<const Scenario>> scenarios, const EnvOptions& env,
                  int seeds);

  /// The reach-aware score of the policy in `file` (lower is better): the geometric mean over
  /// the scenarios of its score over the best heuristic's there, both as `dynamix evaluate`
  /// ranks them (a miss on any seed counts as the scenario's miss time).
  double score(const std::filesystem::path& file) const;
  /// Scores `file` and keeps a copy of it as `keep` when the score is the best so far (or is
  /// the first); true if it was.
  bool consider(const std::filesystem::path& file, const std::filesystem::path& keep);
  /// The best score so far; nullopt before the first.
  std::optional<double> best() const { return best_; }
  /// The score of the last policy considered.
  std::optional<double> last() const { return last_; }
  std::size_t scenarios() const { return scenarios_.size(); }

  /// Seeds differ from `dynamix evaluate`'s (from 1000), so that selection and report never
  /// share an episode.
  static constexpr std::uint64_t kSelectionSeed = 5000;

 private:
  std::vector<std::shared_ptr<const Scenario>> scenarios_;
  EnvOptions env_;
  int seeds_;
  /// The heuristics' episodes, per scenario.
  std::vector<std::vector<EpisodeResult>> references_;
  std::optional<double> best_;
  std::optional<double> last_;
};

}  // namespace dynamix
