// How a rollout's workers choose their actions: independent draws from π, one shared uniform
// number per environment (coordinated), and one explorer per environment with greedy peers
// (single explorer); the one seam the PPO trainer goes through for all of them.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "gym/vector_env.h"
#include "policies/ppo/ppo_learner.h"
#include "policies/ppo/ppo_options.h"

namespace dynamix {

class Rng;

/// One environment's workers in a step's batch: rows first_row .. first_row + workers - 1.
/// An environment awaiting its reset has no workers.
struct WorkerGroup {
  std::size_t first_row = 0;
  std::size_t workers = 0;
};

/// A step's actions, one per row, with π's log-probability and V of each row's observation.
struct StepActions {
  std::vector<int> actions;
  std::vector<float> log_probs;
  std::vector<float> values;
  /// 1 where the action was drawn from π; 0 where the worker acted greedily.
  std::vector<char> sampled;

  /// Room for `rows` rows, every one sampled.
  static StepActions sized(std::size_t rows) {
    return {.actions = std::vector<int>(rows),
            .log_probs = std::vector<float>(rows),
            .values = std::vector<float>(rows),
            .sampled = std::vector<char>(rows, 1)};
  }
};

class Exploration {
 public:
  /// Coordinated when the options say so, and always when `shared_action`: when the workers'
  /// choices meet in one global batch (the global and noise action bases), independent draws
  /// would average each other out and the cluster would hardly explore. With `shared_action`
  /// one random worker's row per environment and decision is kept for training: the decision
  /// is one, and a sample per worker would weigh a 256-worker cluster 64 times a 4-worker one.
  Exploration(const PpoOptions& options, bool shared_action)
      : coordinated_(options.coordinated_exploration || shared_action),
        single_explorer_(options.single_explorer),
        one_row_per_decision_(shared_action && !options.single_explorer) {}

  /// Whether updates train only on the rows StepActions::sampled marks.
  bool trains_on_sampled_rows() const { return single_explorer_ || one_row_per_decision_; }

  /// The actions for `rows` normalized observations grouped by environment, drawing from `rng`
  /// in a fixed order (every group's uniform numbers, then every group's explorer).
  StepActions act(PpoLearner& learner, std::span<const float> normalized,
                  std::span<const WorkerGroup> groups, std::size_t rows, Rng& rng) const;

  /// act(), then a step of `envs` with each group's actions (group i is environment i's rows)
  /// into `env_actions` and `results`: the same draws, actions and results. Where a row's action
  /// depends on its row and its uniform number alone (not with a single explorer, whose peers
  /// act greedily), each environment's rows act on the thread that then steps it.
  StepActions act_and_step(PpoLearner& learner, std::span<const float> normalized,
                           std::span<const WorkerGroup> groups, std::size_t rows, Rng& rng,
                           VectorEnv& envs, std::vector<std::vector<int>>& env_actions,
                           std::vector<StepResult>& results);

 private:
  /// act()'s first draws: one uniform number per row, its own or its environment's with
  /// coordinated exploration.
  std::vector<double> uniforms(std::span<const WorkerGroup> groups, std::size_t rows,
                               Rng& rng) const;
  /// act()'s last draws, once every row has acted: the rows kept for training.
  void mark_trained_rows(std::span<const WorkerGroup> groups, Rng& rng, StepActions& step) const;
  /// One random worker per environment keeps its sampled action; the others act greedily, so
  /// that the explorer's advantage is not drowned in its peers' exploration noise.
  static void keep_one_explorer(PpoLearner& learner, std::span<const float> normalized,
                                std::span<const WorkerGroup> groups, Rng& rng, StepActions& step);

  bool coordinated_;
  bool single_explorer_;
  bool one_row_per_decision_;
  /// Each environment's scratch for acting on the thread that steps it.
  std::vector<PpoLearner::ActScratch> scratch_;
};

}  // namespace dynamix
