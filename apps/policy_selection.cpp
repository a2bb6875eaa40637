// Selection on held-out scenarios: learned policies against the heuristics, reach-aware.
#include "apps/policy_selection.h"

#include <cmath>

#include "apps/policy_factory.h"
#include "gym/env_knobs.h"
#include "sim/core/check.h"

namespace dynamix {
namespace {

constexpr const char* kHeuristics[] = {"goodput", "proportional", "gns", "goodput+proportional"};

std::vector<EpisodeResult> run_seeds(const std::shared_ptr<const Scenario>& scenario,
                                     const std::string& name, const EnvOptions& options,
                                     int seeds) {
  std::vector<EpisodeResult> results;
  for (int i = 0; i < seeds; ++i) {
    const std::uint64_t seed = PolicySelection::kSelectionSeed + static_cast<std::uint64_t>(i);
    const std::unique_ptr<Policy> policy = make_policy(name, seed, options, "--select-on");
    BatchSizeEnv env(std::make_shared<FixedScenario>(scenario), options);
    EpisodeResult result = run_episode(env, *policy, seed);
    result.scenario = scenario->name;
    result.policy = name;
    results.push_back(std::move(result));
  }
  return results;
}

EnvOptions selection_options(EnvOptions options) {
  options.initial_batch = kEvaluationInitialBatch;
  options.stop_at_target = true;
  return options;
}

}  // namespace

int misses_beside(const SelectionScore& policy, const SelectionScore& reference) {
  DYNAMIX_CHECK(policy.reached.size() == reference.reached.size(),
                policy.reached.size() << " episodes against " << reference.reached.size());
  int misses = 0;
  for (std::size_t i = 0; i < policy.reached.size(); ++i) {
    if (!policy.reached[i] && reference.reached[i]) ++misses;
  }
  return misses;
}

bool does_harm(const SelectionScore& policy, const SelectionScore& fixed_point) {
  return policy.score > fixed_point.score || misses_beside(policy, fixed_point) > 0;
}

PolicySelection::PolicySelection(std::vector<std::shared_ptr<const Scenario>> scenarios,
                                 const EnvOptions& env, int seeds)
    : scenarios_(std::move(scenarios)), env_(selection_options(env)), seeds_(seeds) {
  const EnvOptions heuristic = selection_options(evaluation_env_options());
  for (const auto& scenario : scenarios_) {
    std::vector<EpisodeResult>& results = references_.emplace_back();
    for (const char* name : kHeuristics) {
      for (EpisodeResult& result : run_seeds(scenario, name, heuristic, seeds_)) {
        results.push_back(std::move(result));
      }
    }
  }
}

SelectionScore PolicySelection::score(const std::filesystem::path& file) const {
  SelectionScore score;
  double log_sum = 0;
  for (std::size_t s = 0; s < scenarios_.size(); ++s) {
    std::vector<EpisodeResult> results = references_[s];
    for (EpisodeResult& result : run_seeds(scenarios_[s], "ppo:" + file.string(), env_, seeds_)) {
      score.reached.push_back(result.time_to_target_s.has_value());
      results.push_back(std::move(result));
    }
    const ScenarioScores scores = score_results(results).front();
    const double reference =
        scores.best_heuristic ? scores.policies[*scores.best_heuristic].score_s : scores.penalty_s;
    log_sum += std::log(scores.policies.back().score_s / reference);
  }
  score.score = std::exp(log_sum / static_cast<double>(scenarios_.size()));
  return score;
}

bool PolicySelection::consider(const std::filesystem::path& file,
                               const std::filesystem::path& keep) {
  SelectionScore scored = score(file);
  last_ = scored.score;
  if (best_ && best_->score <= *last_) return false;
  best_ = std::move(scored);
  if (file != keep) {
    std::filesystem::copy_file(file, keep, std::filesystem::copy_options::overwrite_existing);
  }
  return true;
}

}  // namespace dynamix
