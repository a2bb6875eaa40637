// Evaluation: episodes, bootstrap intervals, reach-aware scores and tables.
#include "studies/evaluation.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <numeric>
#include <ostream>

#include "sim/core/check.h"
#include "sim/core/random.h"
#include "sim/io/json_writer.h"

namespace dynamix {
namespace {

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string interval_text(const Interval& interval, int digits) {
  return fixed(interval.mean, digits) + " [" + fixed(interval.low, digits) + ", " +
         fixed(interval.high, digits) + "]";
}

int global_batch(std::span<const int> batches) {
  return std::accumulate(batches.begin(), batches.end(), 0);
}

/// Index of the neutral action of the environment's set, if it has one.
std::optional<int> hold_action(const EnvOptions& options) {
  const std::optional<std::size_t> neutral = neutral_action(options.action_base, options.actions);
  return neutral ? std::optional(static_cast<int>(*neutral)) : std::nullopt;
}

/// Running statistics of one episode's decisions.
class DecisionStats {
 public:
  explicit DecisionStats(std::span<const int> start) : min_(global_batch(start)), max_(min_) {}

  /// `before` and `after` are the batches in force around the decision; `actions` the indices
  /// the policy took (empty when it set batches directly).
  void add(std::span<const int> before, std::span<const int> after, std::span<const int> actions,
           std::optional<int> hold) {
    const int old_global = global_batch(before);
    const int new_global = global_batch(after);
    min_ = std::min(min_, new_global);
    max_ = std::max(max_, new_global);
    change_ += old_global > 0 ? std::abs(new_global - old_global) / double(old_global) : 0.0;
    ++decisions_;
    for (std::size_t w = 0; w < after.size(); ++w) {
      departures_ += actions.empty() ? before[w] != after[w]
                                     : (!hold || w >= actions.size() || actions[w] != *hold);
      ++worker_decisions_;
    }
  }

  void fill(EpisodeResult& result) const {
    result.min_global_batch = min_;
    result.max_global_batch = max_;
    result.global_batch_change = decisions_ ? change_ / double(decisions_) : 0.0;
    result.departure_share = worker_decisions_ ? departures_ / double(worker_decisions_) : 0.0;
  }

 private:
  int min_, max_;
  double change_ = 0;
  std::int64_t decisions_ = 0;
  double departures_ = 0;
  std::int64_t worker_decisions_ = 0;
};

/// Accumulates the batch-iterations of every worker between counted iterations.
class BatchAverage {
 public:
  void count(const BatchSizeEnv& env, std::int64_t iteration) {
    const auto span = static_cast<double>(iteration - last_iteration_);
    for (int b : env.batches()) batch_iterations_ += b * span;
    iterations_ += static_cast<double>(env.workers()) * span;
    last_iteration_ = iteration;
  }
  double mean() const { return iterations_ > 0 ? batch_iterations_ / iterations_ : 0; }

 private:
  std::int64_t last_iteration_ = 0;
  double batch_iterations_ = 0;
  double iterations_ = 0;
};

EpisodeResult start_result(const BatchSizeEnv& env, const Policy& policy, std::uint64_t seed) {
  EpisodeResult result;
  result.policy = policy.name();
  result.kind = policy.kind();
  result.seed = seed;
  result.scenario = env.scenario().name;
  result.time_budget_s = env.scenario().training.budget_time_s.value_or(0);
  result.miss_time_s = env.reward_options().miss_time_s;
  return result;
}

/// Adds `count` decisions of `rule` to `choices` (rules in first-added order).
void add_choices(std::vector<std::pair<std::string, std::int64_t>>& choices,
                 const std::string& rule, std::int64_t count) {
  const auto found = std::find_if(choices.begin(), choices.end(),
                                  [&rule](const auto& choice) { return choice.first == rule; });
  if (found == choices.end()) {
    choices.emplace_back(rule, count);
  } else {
    found->second += count;
  }
}

}  // namespace

const char* policy_kind_name(PolicyKind kind) {
  switch (kind) {
    case PolicyKind::kStatic:
      return "static";
    case PolicyKind::kHeuristic:
      return "heuristic";
    case PolicyKind::kLearned:
      return "learned";
    case PolicyKind::kSchedule:
      return "schedule";
    case PolicyKind::kOracle:
      return "oracle";
    case PolicyKind::kOther:
      break;
  }
  return "other";
}

EpisodeResult run_episode(BatchSizeEnv& env, Policy& policy, std::uint64_t seed, DecisionLog* log) {
  ResetResult reset = env.reset(seed, {.initial_batch = policy.initial_batch()});
  EpisodeResult result = start_result(env, policy, seed);
  const bool clamped = std::find(reset.info.clamped.begin(), reset.info.clamped.end(), true) !=
                       reset.info.clamped.end();
  if (policy.kind() == PolicyKind::kStatic && clamped) {
    result.feasible = false;
    return result;
  }
  policy.begin_episode(env.decision_context());
  StepResult step;
  step.observation = std::move(reset.observation);
  BatchAverage average;
  average.count(env, reset.info.iteration);
  DecisionStats stats(env.batches());
  const std::optional<int> own = policy.neutral_action();
  const std::optional<int> hold = own ? own : hold_action(env.options());
  std::vector<int> before;
  std::vector<int> actions;
  std::vector<std::size_t> members = env.members();
  while (!env.episode_over()) {
    if (env.members() != members) {
      members = env.members();
      policy.membership_changed(env.decision_context());
    }
    const std::vector<int> batches = policy.decide(env.decision_context(), step.observation);
    if (log) log->request(env.batches(), batches);
    if (const std::optional<std::string> rule = policy.last_rule()) {
      add_choices(result.rule_choices, *rule, 1);
    }
    const std::span<const int> taken = policy.last_actions();
    actions.assign(taken.begin(), taken.end());
    before = env.batches();
    env.step_batches(batches, step);
    average.count(env, step.info.iteration);
    stats.add(before, step.info.batches, actions, hold);
    result.episode_return += std::accumulate(step.rewards.begin(), step.rewards.end(), 0.0) /
                             static_cast<double>(std::max<std::size_t>(1, step.rewards.size()));
    ++result.decisions;
    if (log) log->record(step, actions);
  }
  const TrainingRun& run = env.run();
  result.time_to_target_s =
      run.time_to_target() ? std::optional(to_seconds(*run.time_to_target())) : std::nullopt;
  result.final_accuracy = run.validation_accuracy().value_or(0);
  result.total_time_s = to_seconds(run.now());
  result.epochs = run.epochs();
  result.events = run.events();
  result.mean_batch_size = average.mean();
  stats.fill(result);
  return result;
}

Interval bootstrap_mean(std::span<const double> values, std::uint64_t seed, int resamples) {
  Interval interval;
  if (values.empty()) return interval;
  double sum = 0;
  for (double v : values) sum += v;
  interval.mean = sum / static_cast<double>(values.size());
  Rng rng(seed, stream_id("bootstrap"));
  std::vector<double> means(static_cast<std::size_t>(resamples));
  for (double& mean : means) {
    double resample = 0;
    for (std::size_t i = 0; i < values.size(); ++i) resample += values[rng.below(values.size())];
    mean = resample / static_cast<double>(values.size());
  }
  std::sort(means.begin(), means.end());
  const auto at = [&](double q) {
    return means[static_cast<std::size_t>(std::clamp(q * (resamples - 1), 0.0, resamples - 1.0))];
  };
  interval.low = at(0.025);
  interval.high = at(0.975);
  return interval;
}

namespace {

PolicyScore score_policy(const std::vector<const EpisodeResult*>& episodes, double penalty_s) {
  PolicyScore score;
  score.policy = episodes.front()->policy;
  score.kind = episodes.front()->kind;
  score.seeds = static_cast<int>(episodes.size());
  std::vector<double> times, accuracies, batches;
  score.min_global_batch = episodes.front()->min_global_batch;
  for (const EpisodeResult* r : episodes) {
    score.feasible = score.feasible && r->feasible;
    if (!r->feasible) continue;
    if (r->time_to_target_s) times.push_back(*r->time_to_target_s);
    accuracies.push_back(r->final_accuracy);
    batches.push_back(r->mean_batch_size);
    score.min_global_batch = std::min(score.min_global_batch, r->min_global_batch);
    score.max_global_batch = std::max(score.max_global_batch, r->max_global_batch);
    score.global_batch_change += r->global_batch_change / double(episodes.size());
    score.departure_share += r->departure_share / double(episodes.size());
  }
  score.reached = static_cast<int>(times.size());
  score.time_to_target = bootstrap_mean(times, 1);
  score.final_accuracy = bootstrap_mean(accuracies, 2);
  score.mean_batch_size = bootstrap_mean(batches, 3);
  score.score_s = score.reached_all() ? score.time_to_target.mean : penalty_s;
  return score;
}

/// The scenario's budget_time_s; else the latest its budgets can end a run (miss_time_s), which
/// the scenario alone sets, so that a miss scores the same whatever else is evaluated; the
/// longest episode only for a scenario without any budget.
double penalty_time(const std::vector<const EpisodeResult*>& episodes) {
  double latest = 0, longest = 0;
  for (const EpisodeResult* r : episodes) {
    if (r->time_budget_s > 0) return r->time_budget_s;
    latest = std::max(latest, r->miss_time_s);
    longest = std::max(longest, r->total_time_s);
  }
  return latest > 0 ? latest : longest;
}

std::optional<std::size_t> fastest(const std::vector<PolicyScore>& scores, PolicyKind kind) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (scores[i].kind != kind || !scores[i].reached_all()) continue;
    if (!best || scores[i].score_s < scores[*best].score_s) best = i;
  }
  return best;
}

void rank(ScenarioScores& scenario) {
  std::vector<std::size_t> order(scenario.policies.size());
  std::iota(order.begin(), order.end(), 0);
  const auto key = [&](std::size_t i) {
    return std::pair(!scenario.policies[i].reached_all(), scenario.policies[i].score_s);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  scenario.ranks.assign(order.size(), 0);
  for (std::size_t r = 0; r < order.size(); ++r) {
    const bool tie = r > 0 && key(order[r]) == key(order[r - 1]);
    scenario.ranks[order[r]] = tie ? scenario.ranks[order[r - 1]] : static_cast<int>(r + 1);
  }
}

}  // namespace

std::vector<ScenarioScores> score_results(const std::vector<EpisodeResult>& results) {
  std::vector<std::string> scenarios;
  std::map<std::string, std::vector<std::string>> policies;
  std::map<std::pair<std::string, std::string>, std::vector<const EpisodeResult*>> groups;
  std::map<std::string, std::vector<const EpisodeResult*>> by_scenario;
  for (const EpisodeResult& r : results) {
    if (!by_scenario.contains(r.scenario)) scenarios.push_back(r.scenario);
    by_scenario[r.scenario].push_back(&r);
    auto& group = groups[{r.scenario, r.policy}];
    if (group.empty()) policies[r.scenario].push_back(r.policy);
    group.push_back(&r);
  }
  std::vector<ScenarioScores> out;
  for (const std::string& name : scenarios) {
    ScenarioScores scenario;
    scenario.scenario = name;
    scenario.penalty_s = penalty_time(by_scenario[name]);
    for (const std::string& policy : policies[name]) {
      scenario.policies.push_back(score_policy(groups[{name, policy}], scenario.penalty_s));
    }
    scenario.best_static = fastest(scenario.policies, PolicyKind::kStatic);
    scenario.best_heuristic = fastest(scenario.policies, PolicyKind::kHeuristic);
    for (std::size_t i = 0; i < scenario.policies.size(); ++i) {
      if (scenario.policies[i].kind == PolicyKind::kOracle) scenario.oracle = i;
    }
    rank(scenario);
    out.push_back(std::move(scenario));
  }
  return out;
}

void write_results_csv(std::ostream& out, const std::vector<EpisodeResult>& results) {
  out << "scenario,policy,kind,seed,feasible,reached,time_to_target_s,final_accuracy,"
         "total_time_s,mean_batch_size,min_global_batch,max_global_batch,global_batch_change,"
         "departure_share,decisions\n";
  for (const EpisodeResult& r : results) {
    out << csv_field(r.scenario) << ',' << csv_field(r.policy) << ',' << policy_kind_name(r.kind)
        << ',' << r.seed << ',' << r.feasible << ',' << r.time_to_target_s.has_value() << ','
        << (r.time_to_target_s ? format_number(*r.time_to_target_s) : "") << ','
        << format_number(r.final_accuracy) << ',' << format_number(r.total_time_s) << ','
        << format_number(r.mean_batch_size) << ',' << r.min_global_batch << ','
        << r.max_global_batch << ',' << format_number(r.global_batch_change) << ','
        << format_number(r.departure_share) << ',' << r.decisions << '\n';
  }
}

namespace {

std::string reached_text(const PolicyScore& score) {
  if (!score.feasible) return "infeasible";
  if (score.reached == score.seeds)
    return std::to_string(score.seeds) + "/" + std::to_string(score.seeds);
  return "miss " + std::to_string(score.seeds - score.reached) + "/" + std::to_string(score.seeds);
}

std::string ratio_text(const PolicyScore& score, const ScenarioScores& scenario,
                       std::optional<std::size_t> reference) {
  if (!reference) return "n/a";
  return fixed(score.score_s / scenario.policies[*reference].score_s, 3);
}

/// Share of the gap between the best heuristic and the oracle that `score` closes.
std::string headroom_text(const PolicyScore& score, const ScenarioScores& scenario) {
  if (!scenario.oracle || !scenario.best_heuristic) return "n/a";
  const double heuristic = scenario.policies[*scenario.best_heuristic].score_s;
  const double gap = heuristic - scenario.policies[*scenario.oracle].score_s;
  if (gap <= 0) return "n/a";
  // Slower than the best heuristic: the share is negative and its size says little.
  if (score.score_s > heuristic) return "<0%";
  return fixed(100 * (heuristic - score.score_s) / gap, 0) + "%";
}

void write_scenario_table(std::ostream& out, const ScenarioScores& scenario) {
  out << "\n## " << scenario.scenario << "\n\n";
  const auto name_of = [&](std::optional<std::size_t> i) {
    return i ? scenario.policies[*i].policy : std::string("none reached the target on every seed");
  };
  out << "Best static batch: " << name_of(scenario.best_static)
      << ". Best heuristic: " << name_of(scenario.best_heuristic) << ". A miss counts as "
      << fixed(scenario.penalty_s, 1) << " s.\n\n";
  out << "| rank | policy | reached | time_to_target_s | final_accuracy | ratio_to_best_static | "
         "ratio_to_best_heuristic | headroom | mean_batch_size | global_batch | departures |\n"
      << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < scenario.policies.size(); ++i) {
    const PolicyScore& p = scenario.policies[i];
    out << "| " << scenario.ranks[i] << " | " << p.policy << " | " << reached_text(p) << " | ";
    if (!p.feasible) {
      out << "| | | | | | | |\n";
      continue;
    }
    out << (p.reached > 0 ? interval_text(p.time_to_target, 1) : "never") << " | "
        << interval_text(p.final_accuracy, 4) << " | "
        << ratio_text(p, scenario, scenario.best_static) << " | "
        << ratio_text(p, scenario, scenario.best_heuristic) << " | " << headroom_text(p, scenario)
        << " | " << fixed(p.mean_batch_size.mean, 1) << " | " << p.min_global_batch << "–"
        << p.max_global_batch << " | " << fixed(100 * p.departure_share, 0) << "% |\n";
  }
}

double geometric_mean(const std::vector<double>& values) {
  double log_sum = 0;
  for (double v : values) log_sum += std::log(v);
  return std::exp(log_sum / static_cast<double>(values.size()));
}

void write_across_scenarios(std::ostream& out, const std::vector<ScenarioScores>& scenarios) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> ratios;
  std::map<std::string, int> misses;
  int counted = 0;
  for (const ScenarioScores& scenario : scenarios) {
    if (!scenario.best_static) continue;
    ++counted;
    const double reference = scenario.policies[*scenario.best_static].score_s;
    for (const PolicyScore& p : scenario.policies) {
      if (!ratios.contains(p.policy)) order.push_back(p.policy);
      ratios[p.policy].push_back(p.score_s / reference);
      misses[p.policy] += !p.reached_all();
    }
  }
  out << "\n## Across scenarios\n\nGeometric mean of the ratios to the best static batch over the "
      << counted
      << " scenario(s) where a static batch reached the target on every seed; a miss "
         "or an infeasible batch enters at the scenario's miss time.\n\n"
      << "| policy | geometric mean of ratios | scenarios missed |\n|---|---|---|\n";
  for (const std::string& policy : order) {
    const std::vector<double>& values = ratios[policy];
    out << "| " << policy << " | " << fixed(geometric_mean(values), 3) << " | " << misses[policy]
        << (values.size() < static_cast<std::size_t>(counted)
                ? " (run on " + std::to_string(values.size()) + ")"
                : std::string())
        << " |\n";
  }
}

}  // namespace

void write_summary_markdown(std::ostream& out, const std::vector<EpisodeResult>& results) {
  out << "# Evaluation\n\nTime to target in simulated seconds over the seeds that reached it "
         "(mean [95% bootstrap interval]). A policy that misses the target on any seed shows "
         "`miss k/n`, ranks after every policy that always reached it, and scores the scenario's "
         "miss time; ratios divide scores by the best static batch's or the best heuristic's "
         "(the fastest of their kind that reached the target on every seed). headroom: share of "
         "the gap between the best heuristic and the oracle schedule that the policy closes. "
         "global_batch: smallest–largest global batch; departures: share of worker decisions "
         "that left the policy's default (docs/evaluation.md).\n";
  const std::vector<ScenarioScores> scenarios = score_results(results);
  for (const ScenarioScores& scenario : scenarios) write_scenario_table(out, scenario);
  write_across_scenarios(out, scenarios);
}

}  // namespace dynamix

namespace dynamix {

bool has_rule_choices(const std::vector<EpisodeResult>& results) {
  return std::any_of(results.begin(), results.end(),
                     [](const EpisodeResult& r) { return !r.rule_choices.empty(); });
}

void write_rule_choices_csv(std::ostream& out, const std::vector<EpisodeResult>& results) {
  out << "scenario,policy,seed,rule,decisions\n";
  for (const EpisodeResult& r : results) {
    for (const auto& [rule, count] : r.rule_choices) {
      out << r.scenario << ',' << r.policy << ',' << r.seed << ',' << rule << ',' << count << '\n';
    }
  }
}

void write_rule_choices_markdown(std::ostream& out, const std::vector<EpisodeResult>& results) {
  out << "## Rule choices\n\n"
         "Share of the decisions each rule decided, over every seed, for the policies that pick "
         "rules (the rule action base).\n\n"
         "| scenario | policy | rules |\n|---|---|---|\n";
  // Scenario and policy in first-seen order, the rules by share.
  std::vector<std::pair<std::string, std::string>> keys;
  for (const EpisodeResult& r : results) {
    if (r.rule_choices.empty()) continue;
    const std::pair<std::string, std::string> key{r.scenario, r.policy};
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  for (const auto& [scenario, policy] : keys) {
    std::vector<std::pair<std::string, std::int64_t>> totals;
    std::int64_t decisions = 0;
    for (const EpisodeResult& r : results) {
      if (r.scenario != scenario || r.policy != policy) continue;
      for (const auto& choice : r.rule_choices) {
        decisions += choice.second;
        add_choices(totals, choice.first, choice.second);
      }
    }
    std::stable_sort(totals.begin(), totals.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    out << "| " << scenario << " | " << policy << " | ";
    for (std::size_t i = 0; i < totals.size(); ++i) {
      out << (i == 0 ? "" : ", ") << "`" << totals[i].first << "` "
          << fixed(100.0 * static_cast<double>(totals[i].second) / static_cast<double>(decisions),
                   0)
          << "%";
    }
    out << " |\n";
  }
}

std::string episode_record(const EpisodeResult& r) {
  std::string text;
  const auto add = [&text](auto value) {
    char field[32];
    text.append(field, std::to_chars(field, field + sizeof field, value).ptr);
    text += ' ';
  };
  add(static_cast<int>(r.kind));
  add(r.seed);
  add(static_cast<int>(r.feasible));
  add(static_cast<int>(r.time_to_target_s.has_value()));
  add(r.time_to_target_s.value_or(0.0));
  for (const double value :
       {r.final_accuracy, r.total_time_s, r.epochs, r.time_budget_s, r.miss_time_s,
        r.mean_batch_size, r.global_batch_change, r.departure_share, r.episode_return}) {
    add(value);
  }
  add(r.events);
  add(r.min_global_batch);
  add(r.max_global_batch);
  add(r.decisions);
  add(r.rule_choices.size());
  for (const auto& [rule, count] : r.rule_choices) {
    text += rule + ' ';
    add(count);
  }
  return text;
}

EpisodeResult parse_episode_record(const std::string& text) {
  const char* at = text.data();
  const char* const end = text.data() + text.size();
  const auto take = [&](auto& value) {
    const auto [next, error] = std::from_chars(at, end, value);
    DYNAMIX_CHECK(error == std::errc(), "a garbled episode record: " << text);
    at = next + 1;
  };
  EpisodeResult r;
  int kind = 0;
  int feasible = 0;
  int reached = 0;
  double time_to_target = 0;
  take(kind);
  take(r.seed);
  take(feasible);
  take(reached);
  take(time_to_target);
  r.kind = static_cast<PolicyKind>(kind);
  r.feasible = feasible != 0;
  if (reached != 0) r.time_to_target_s = time_to_target;
  for (double* value :
       {&r.final_accuracy, &r.total_time_s, &r.epochs, &r.time_budget_s, &r.miss_time_s,
        &r.mean_batch_size, &r.global_batch_change, &r.departure_share, &r.episode_return}) {
    take(*value);
  }
  take(r.events);
  take(r.min_global_batch);
  take(r.max_global_batch);
  take(r.decisions);
  std::size_t rules = 0;
  take(rules);
  for (std::size_t i = 0; i < rules; ++i) {
    const char* space = std::find(at, end, ' ');
    DYNAMIX_CHECK(space != end, "a garbled episode record: " << text);
    std::string rule(at, space);
    at = space + 1;
    std::int64_t count = 0;
    take(count);
    r.rule_choices.emplace_back(std::move(rule), count);
  }
  return r;
}

}  // namespace dynamix
