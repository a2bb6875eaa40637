// Selection on held-out scenarios: learned policies against the heuristics, reach-aware.
#include "apps/policy_selection.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

#include "apps/policy_factory.h"
#include "gym/env_knobs.h"
#include "gym/rules.h"
#include "sim/core/check.h"

namespace dynamix {
namespace {

/// `seeds` episodes of the policy `name` on each of `scenarios`, scenario by scenario, on
/// `threads` threads: each episode has its own policy and environment, so the results do not
/// depend on which thread ran it.
std::vector<std::vector<EpisodeResult>> run_seeds(
    const std::vector<std::shared_ptr<const Scenario>>& scenarios, const std::string& name,
    const EnvOptions& options, int seeds, std::size_t threads,
    const IterationObserver& observer = {}) {
  const auto per_scenario = static_cast<std::size_t>(seeds);
  std::vector<EpisodeResult> flat(scenarios.size() * per_scenario);
  std::vector<std::exception_ptr> errors(flat.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k = next++; k < flat.size(); k = next++) {
      try {
        const std::shared_ptr<const Scenario>& scenario = scenarios[k / per_scenario];
        const std::uint64_t seed = PolicySelection::kSelectionSeed + k % per_scenario;
        const std::unique_ptr<Policy> policy = make_policy(name, seed, options, "--select-on");
        BatchSizeEnv env(std::make_shared<FixedScenario>(scenario), options);
        env.set_iteration_observer(observer);
        flat[k] = run_episode(env, *policy, seed);
        flat[k].scenario = scenario->name;
        flat[k].policy = name;
      } catch (...) {
        errors[k] = std::current_exception();
      }
    }
  };
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  {
    std::vector<std::jthread> helpers;
    for (std::size_t t = 1; t < std::min(threads, flat.size()); ++t) helpers.emplace_back(work);
    work();
  }
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
  std::vector<std::vector<EpisodeResult>> results(scenarios.size());
  for (std::size_t k = 0; k < flat.size(); ++k) {
    results[k / per_scenario].push_back(std::move(flat[k]));
  }
  return results;
}

EnvOptions selection_options(EnvOptions options) {
  options.initial_batch = kEvaluationInitialBatch;
  options.stop_at_target = true;
  // A learned policy decides with its own action set (the rule base's anchor comes first).
  options.actions.clear();
  return options;
}

/// The per-scenario best rule's score there: the fastest reference that reached on every seed;
/// the scenario's miss time when none did.
double reference_score(const ScenarioScores& scores, std::size_t references) {
  double best = scores.penalty_s;
  for (std::size_t i = 0; i < references; ++i) {
    if (scores.policies[i].reached_all()) best = std::min(best, scores.policies[i].score_s);
  }
  return best;
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

std::vector<std::string> PolicySelection::selection_rules() {
  std::vector<std::string> rules(kSelectableRules.begin(), kSelectableRules.end());
  rules.emplace_back("gns");
  return rules;
}

PolicySelection::PolicySelection(std::vector<std::shared_ptr<const Scenario>> scenarios,
                                 const EnvOptions& env, int seeds, std::size_t threads,
                                 const IterationObserver& observer)
    : scenarios_(std::move(scenarios)),
      env_(selection_options(env)),
      seeds_(seeds),
      threads_(threads),
      references_(scenarios_.size()) {
  const EnvOptions rule_options = selection_options(env_preset("evaluation"));
  const std::vector<std::string> names = selection_rules();
  for (const std::string& name : names) {
    std::vector<std::vector<EpisodeResult>> runs =
        run_seeds(scenarios_, name, rule_options, seeds_, threads_, observer);
    for (std::size_t s = 0; s < scenarios_.size(); ++s) {
      for (EpisodeResult& result : runs[s]) references_[s].push_back(std::move(result));
    }
  }
  rules_.resize(names.size());
  std::vector<double> log_sums(names.size(), 0.0);
  for (std::size_t s = 0; s < scenarios_.size(); ++s) {
    const ScenarioScores scores = score_results(references_[s]).front();
    const double reference = reference_score(scores, names.size());
    SelectionScenario& best = bests_.emplace_back(SelectionScenario{
        .name = scenarios_[s]->name, .best_rule = std::nullopt, .best_rule_time_s = 0});
    for (std::size_t r = 0; r < names.size(); ++r) {
      const PolicyScore& rule = scores.policies[r];
      if (rule.reached_all() && rule.score_s == reference && !best.best_rule) {
        best.best_rule = rule.policy;
        best.best_rule_time_s = rule.score_s;
      }
      log_sums[r] += std::log(rule.score_s / reference);
      rules_[r].misses += rule.seeds - rule.reached;
    }
    for (const EpisodeResult& result : references_[s]) {
      const auto r = static_cast<std::size_t>(std::find(names.begin(), names.end(), result.policy) -
                                              names.begin());
      rules_[r].score.reached.push_back(result.time_to_target_s.has_value());
    }
  }
  for (std::size_t r = 0; r < names.size(); ++r) {
    rules_[r].rule = names[r];
    rules_[r].score.score = std::exp(log_sums[r] / static_cast<double>(scenarios_.size()));
  }
}

std::optional<std::string> PolicySelection::best_reaching_rule(
    std::span<const std::string_view> candidates) const {
  const RuleStanding* best = nullptr;
  for (const RuleStanding& rule : rules_) {
    const bool candidate = candidates.empty() || std::find(candidates.begin(), candidates.end(),
                                                           rule.rule) != candidates.end();
    if (!candidate || rule.misses > 0) continue;
    if (best == nullptr || rule.score.score < best->score.score) best = &rule;
  }
  return best ? std::optional(best->rule) : std::nullopt;
}

double PolicySelection::best_rule_score() const {
  double best = std::numeric_limits<double>::infinity();
  for (const RuleStanding& rule : rules_) best = std::min(best, rule.score.score);
  return best;
}

SelectionScore PolicySelection::score(const std::filesystem::path& file) const {
  SelectionScore score;
  double log_sum = 0;
  std::vector<std::vector<EpisodeResult>> runs =
      run_seeds(scenarios_, "ppo:" + file.string(), env_, seeds_, threads_);
  for (std::size_t s = 0; s < scenarios_.size(); ++s) {
    std::vector<EpisodeResult> results = references_[s];
    for (EpisodeResult& result : runs[s]) {
      score.reached.push_back(result.time_to_target_s.has_value());
      results.push_back(std::move(result));
    }
    const ScenarioScores scores = score_results(results).front();
    log_sum += std::log(scores.policies.back().score_s / reference_score(scores, rules_.size()));
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
