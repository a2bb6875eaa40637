// Exploration: the uniform numbers actions are drawn with, and the single explorer's greedy peers.
#include "policies/ppo/exploration.h"

#include <algorithm>

#include "policies/ppo/ppo_learner.h"
#include "sim/core/random.h"

namespace dynamix {

StepActions Exploration::act(PpoLearner& learner, std::span<const float> normalized,
                             std::span<const WorkerGroup> groups, std::size_t rows,
                             Rng& rng) const {
  StepActions step = StepActions::sized(rows);
  if (rows == 0) return step;
  learner.act(normalized, uniforms(groups, rows, rng), step.actions, step.log_probs, step.values);
  if (single_explorer_) keep_one_explorer(learner, normalized, groups, rng, step);
  mark_trained_rows(groups, rng, step);
  return step;
}

void Exploration::mark_trained_rows(std::span<const WorkerGroup> groups, Rng& rng,
                                    StepActions& step) const {
  if (!one_row_per_decision_) return;
  for (const WorkerGroup& group : groups) {
    if (group.workers == 0) continue;
    const std::size_t kept = rng.below(group.workers);
    for (std::size_t w = 0; w < group.workers; ++w) step.sampled[group.first_row + w] = w == kept;
  }
}

std::vector<double> Exploration::uniforms(std::span<const WorkerGroup> groups, std::size_t rows,
                                          Rng& rng) const {
  std::vector<double> drawn(rows);
  for (const WorkerGroup& group : groups) {
    if (group.workers == 0) continue;
    const double shared = coordinated_ ? rng.uniform() : 0.0;
    for (std::size_t w = 0; w < group.workers; ++w) {
      drawn[group.first_row + w] = coordinated_ ? shared : rng.uniform();
    }
  }
  return drawn;
}

void Exploration::keep_one_explorer(PpoLearner& learner, std::span<const float> normalized,
                                    std::span<const WorkerGroup> groups, Rng& rng,
                                    StepActions& step) {
  const std::vector<float> logits = learner.logits(normalized);
  const auto action_count = static_cast<std::ptrdiff_t>(learner.actions());
  for (const WorkerGroup& group : groups) {
    if (group.workers == 0) continue;
    const std::size_t explorer = rng.below(group.workers);
    for (std::size_t w = 0; w < group.workers; ++w) {
      if (w == explorer) continue;
      const std::size_t row = group.first_row + w;
      const auto begin = logits.begin() + static_cast<std::ptrdiff_t>(row) * action_count;
      step.actions[row] = static_cast<int>(std::max_element(begin, begin + action_count) - begin);
      step.sampled[row] = 0;
    }
  }
}

}  // namespace dynamix
