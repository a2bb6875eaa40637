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

namespace {

/// Acts for one environment's rows on the thread that steps it.
class GroupActing final : public ActionSource {
 public:
  GroupActing(const PpoLearner& learner, std::span<const float> normalized,
              std::span<const WorkerGroup> groups, std::span<const double> uniforms,
              StepActions& step, std::vector<PpoLearner::ActScratch>& scratch)
      : learner_(learner),
        normalized_(normalized),
        groups_(groups),
        uniforms_(uniforms),
        step_(step),
        scratch_(scratch) {}

  void choose(std::size_t i, std::vector<int>& actions) override {
    const WorkerGroup group = groups_[i];
    const std::size_t f = learner_.features();
    learner_.act(normalized_.subspan(group.first_row * f, group.workers * f),
                 uniforms_.subspan(group.first_row, group.workers),
                 std::span(step_.actions).subspan(group.first_row, group.workers),
                 std::span(step_.log_probs).subspan(group.first_row, group.workers),
                 std::span(step_.values).subspan(group.first_row, group.workers), scratch_[i]);
    const auto first = step_.actions.begin() + static_cast<std::ptrdiff_t>(group.first_row);
    actions.assign(first, first + static_cast<std::ptrdiff_t>(group.workers));
  }

 private:
  const PpoLearner& learner_;
  std::span<const float> normalized_;
  std::span<const WorkerGroup> groups_;
  std::span<const double> uniforms_;
  StepActions& step_;
  std::vector<PpoLearner::ActScratch>& scratch_;
};

}  // namespace

StepActions Exploration::act_and_step(PpoLearner& learner, std::span<const float> normalized,
                                      std::span<const WorkerGroup> groups, std::size_t rows,
                                      Rng& rng, VectorEnv& envs,
                                      std::vector<std::vector<int>>& env_actions,
                                      std::vector<StepResult>& results) {
  if (single_explorer_) {
    // The explorer's peers act on LibTorch's logits of every row: act() as one pass.
    StepActions step = act(learner, normalized, groups, rows, rng);
    env_actions.resize(groups.size());
    for (std::size_t i = 0; i < groups.size(); ++i) {
      const auto first = step.actions.begin() + static_cast<std::ptrdiff_t>(groups[i].first_row);
      env_actions[i].assign(first, first + static_cast<std::ptrdiff_t>(groups[i].workers));
    }
    envs.step(env_actions, results);
    return step;
  }
  // act()'s draws in act()'s order: the uniform numbers, the actions, the rows kept.
  StepActions step = StepActions::sized(rows);
  const std::vector<double> drawn = uniforms(groups, rows, rng);
  scratch_.resize(groups.size());
  GroupActing acting(learner, normalized, groups, drawn, step, scratch_);
  envs.step(acting, env_actions, results);
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
