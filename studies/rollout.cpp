// Hindsight rollout: greedy one-decision improvement of goodput:100 by exact replays.
#include "studies/rollout.h"

#include <algorithm>
#include <limits>

#include "policies/baselines/baselines.h"
#include "sim/core/check.h"
#include "studies/evaluation.h"
#include "studies/oracle.h"

namespace dynamix {
namespace {

/// goodput:R with R scripted per decision: the i-th decision uses percents[i], every later one
/// goodput:100.
class ScriptedAnchorPolicy : public Policy {
 public:
  explicit ScriptedAnchorPolicy(std::vector<int> percents) : percents_(std::move(percents)) {}
  std::string name() const override { return "rollout"; }
  PolicyKind kind() const override { return PolicyKind::kOracle; }
  void begin_episode(const DecisionContext&) override { decisions_ = 0; }
  // The anchor holds no state to start over: the script goes on through membership changes.
  void membership_changed(const DecisionContext&) override {}
  std::vector<int> decide(const DecisionContext& context, const Observation& observation) override {
    const auto i = static_cast<std::size_t>(decisions_++);
    AnchorRatioPolicy anchor(ActionBase::kGoodput,
                             i < percents_.size() ? percents_[i] : kRolloutBasePercent);
    return anchor.decide(context, observation);
  }
  int decisions() const { return decisions_; }

 private:
  std::vector<int> percents_;
  int decisions_ = 0;
};

struct Trial {
  double time_s = std::numeric_limits<double>::infinity();
  int decisions = 0;
};

class SeedSearch {
 public:
  SeedSearch(const std::shared_ptr<const Scenario>& scenario, const EnvOptions& env_options,
             std::uint64_t seed, const RolloutOptions& options)
      : scenario_(scenario), env_options_(env_options), seed_(seed), options_(options) {
    env_options_.stop_at_target = true;
  }

  RolloutOutcome run(const std::function<void(int)>& episodes_done);

 private:
  Trial trial(const std::vector<int>& percents) const {
    BatchSizeEnv env(std::make_shared<FixedScenario>(scenario_), env_options_);
    env.set_iteration_observer(options_.observer);
    ScriptedAnchorPolicy policy(percents);
    const EpisodeResult result = run_episode(env, policy, seed_);
    Trial trial;
    if (result.time_to_target_s) trial.time_s = *result.time_to_target_s;
    trial.decisions = policy.decisions();
    return trial;
  }

  std::shared_ptr<const Scenario> scenario_;
  EnvOptions env_options_;
  std::uint64_t seed_;
  const RolloutOptions& options_;
};

std::optional<double> finite(double seconds) {
  return seconds < std::numeric_limits<double>::infinity() ? std::optional(seconds) : std::nullopt;
}

RolloutOutcome SeedSearch::run(const std::function<void(int)>& episodes_done) {
  std::vector<int> alternatives;
  for (int percent : options_.percents) {
    if (percent != kRolloutBasePercent) alternatives.push_back(percent);
  }
  std::vector<int> chosen;
  Trial best = trial(chosen);
  RolloutOutcome outcome;
  outcome.seed = seed_;
  outcome.base_time_s = finite(best.time_s);
  outcome.episodes = 1;
  const auto block = static_cast<std::size_t>(options_.block);
  const auto candidate = [&](std::size_t first, int percent) {
    std::vector<int> percents = chosen;
    percents.resize(first, kRolloutBasePercent);
    percents.resize(first + block, percent);
    return percents;
  };
  // Each block of the current best episode in turn; a kept change can shorten the episode.
  for (std::size_t i = 0; i < static_cast<std::size_t>(best.decisions); i += block) {
    std::vector<Trial> trials(alternatives.size());
    parallel_for(static_cast<int>(alternatives.size()), options_.jobs, [&](int a) {
      trials[static_cast<std::size_t>(a)] =
          trial(candidate(i, alternatives[static_cast<std::size_t>(a)]));
    });
    outcome.episodes += static_cast<int>(alternatives.size());
    if (episodes_done) episodes_done(static_cast<int>(alternatives.size()));
    for (std::size_t a = 0; a < alternatives.size(); ++a) {
      if (trials[a].time_s >= best.time_s) continue;
      best = trials[a];
      chosen = candidate(i, alternatives[a]);
    }
  }
  outcome.time_s = finite(best.time_s);
  outcome.percents = std::move(chosen);
  outcome.decisions = best.decisions;
  return outcome;
}

}  // namespace

std::vector<RolloutOutcome> hindsight_rollout(const std::shared_ptr<const Scenario>& scenario,
                                              const EnvOptions& env_options,
                                              std::uint64_t first_seed, int seeds,
                                              const RolloutOptions& options,
                                              const std::function<void(int, int)>& progress) {
  DYNAMIX_CHECK(options.block >= 1, "block " << options.block);
  std::vector<RolloutOutcome> outcomes;
  int done = 0;
  for (int s = 0; s < seeds; ++s) {
    SeedSearch search(scenario, env_options, first_seed + static_cast<std::uint64_t>(s), options);
    outcomes.push_back(search.run([&](int episodes) {
      done += episodes;
      if (progress) progress(s + 1, done);
    }));
  }
  return outcomes;
}

}  // namespace dynamix
