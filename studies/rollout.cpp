// Hindsight rollout: greedy blockwise improvement of goodput:100, or of a rule, by exact replays.
#include "studies/rollout.h"

#include <algorithm>
#include <limits>

#include "gym/rules.h"
#include "policies/baselines/baselines.h"
#include "sim/core/check.h"
#include "studies/evaluation.h"
#include "studies/oracle.h"

namespace dynamix {
namespace {

/// A decision scripted per decision: the i-th decision takes script[i], every later one `base`.
class ScriptedPolicy : public Policy {
 public:
  ScriptedPolicy(std::vector<int> script, int base) : script_(std::move(script)), base_(base) {}
  std::string name() const override { return "rollout"; }
  PolicyKind kind() const override { return PolicyKind::kOracle; }
  void begin_episode(const DecisionContext&) override { decisions_ = 0; }
  // The script goes on through membership changes.
  void membership_changed(const DecisionContext&) override {}
  int decisions() const { return decisions_; }

 protected:
  /// This decision's scripted value, counting it.
  int next() {
    const auto i = static_cast<std::size_t>(decisions_++);
    return i < script_.size() ? script_[i] : base_;
  }

 private:
  std::vector<int> script_;
  int base_;
  int decisions_ = 0;
};

/// goodput:R with R scripted per decision.
class ScriptedAnchorPolicy : public ScriptedPolicy {
 public:
  using ScriptedPolicy::ScriptedPolicy;
  std::vector<int> decide(const DecisionContext& context, const Observation& observation) override {
    AnchorRatioPolicy anchor(ActionBase::kGoodput, next());
    return anchor.decide(context, observation);
  }
};

/// The deciding rule scripted per decision; every rule sees every window (a RuleBook), and all
/// start over when the members change, as the rule base does.
class ScriptedRulePolicy : public ScriptedPolicy {
 public:
  ScriptedRulePolicy(std::vector<int> script, int base)
      : ScriptedPolicy(std::move(script), base), book_(default_actions(ActionBase::kRule)) {}
  void begin_episode(const DecisionContext& context) override {
    ScriptedPolicy::begin_episode(context);
    book_.begin_episode(context);
  }
  void membership_changed(const DecisionContext& context) override { book_.begin_episode(context); }
  std::vector<int> decide(const DecisionContext& context, const Observation&) override {
    chosen_.assign(context.workers(), next());
    book_.decide(context, chosen_, requested_);
    return {requested_.begin(), requested_.end()};
  }

 private:
  RuleBook book_;
  std::vector<int> chosen_;
  std::vector<long long> requested_;
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
  Trial trial(const std::vector<int>& choices) const {
    BatchSizeEnv env(std::make_shared<FixedScenario>(scenario_), env_options_);
    env.set_iteration_observer(options_.observer);
    std::unique_ptr<ScriptedPolicy> policy;
    if (options_.rules.empty()) {
      policy = std::make_unique<ScriptedAnchorPolicy>(choices, kRolloutBasePercent);
    } else {
      policy = std::make_unique<ScriptedRulePolicy>(choices, options_.base_rule);
    }
    const EpisodeResult result = run_episode(env, *policy, seed_);
    Trial trial;
    if (result.time_to_target_s) trial.time_s = *result.time_to_target_s;
    trial.decisions = policy->decisions();
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
  const bool rules = !options_.rules.empty();
  const int base = rules ? options_.base_rule : kRolloutBasePercent;
  std::vector<int> alternatives;
  for (int choice : rules ? options_.rules : options_.percents) {
    if (choice != base) alternatives.push_back(choice);
  }
  std::vector<int> chosen;
  Trial best = trial(chosen);
  RolloutOutcome outcome;
  outcome.seed = seed_;
  outcome.base_time_s = finite(best.time_s);
  outcome.episodes = 1;
  const auto block = static_cast<std::size_t>(options_.block);
  const auto candidate = [&](std::size_t first, int choice) {
    std::vector<int> choices = chosen;
    choices.resize(first, base);
    choices.resize(first + block, choice);
    return choices;
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
  outcome.choices = std::move(chosen);
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
