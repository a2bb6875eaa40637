// Evaluation: episodes, bootstrap intervals, tables.
#include "policies/evaluation.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <ostream>

#include "sim/core/random.h"
#include "sim/io/json_writer.h"

namespace dynamix {
namespace {

/// Time to target, or the whole run's time when the target was never reached (censored).
double time_or_budget(const EpisodeResult& result) {
  return result.time_to_target_s.value_or(result.total_time_s);
}

std::string fixed(double value, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, value);
  return buffer;
}

std::string interval_text(const Interval& interval, int digits) {
  return fixed(interval.mean, digits) + " [" + fixed(interval.low, digits) + ", " +
         fixed(interval.high, digits) + "]";
}

}  // namespace

EpisodeResult run_episode(BatchSizeEnv& env, Policy& policy, std::uint64_t seed, DecisionLog* log) {
  EpisodeResult result;
  result.policy = policy.name();
  result.seed = seed;
  ResetResult reset = env.reset(seed, {.initial_batch = policy.initial_batch()});
  result.scenario = env.scenario().name;
  policy.begin_episode(env);
  double batch_iterations = 0;
  double iterations = 0;
  StepResult step;
  step.observation = std::move(reset.observation);
  std::int64_t last_iteration = 0;
  // The batches in force from the last counted iteration up to `iteration`.
  auto count = [&](std::int64_t iteration) {
    const auto span = static_cast<double>(iteration - last_iteration);
    for (int b : env.batches()) batch_iterations += b * span;
    iterations += static_cast<double>(env.workers()) * span;
    last_iteration = iteration;
  };
  count(reset.info.iteration);
  const std::vector<int>& deltas = env.options().actions;
  std::vector<int> actions(env.workers());
  while (!env.episode_over()) {
    const std::vector<int> batches = policy.decide(env, step.observation);
    for (std::size_t w = 0; w < actions.size() && w < batches.size(); ++w) {
      const auto match = std::find(deltas.begin(), deltas.end(), batches[w] - env.batches()[w]);
      actions[w] = match == deltas.end() ? -1 : static_cast<int>(match - deltas.begin());
    }
    env.step_batches(batches, step);
    count(step.info.iteration);
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
  result.mean_batch_size = iterations > 0 ? batch_iterations / iterations : 0;
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

void write_results_csv(std::ostream& out, const std::vector<EpisodeResult>& results) {
  out << "scenario,policy,seed,time_to_target_s,final_accuracy,total_time_s,mean_batch_size\n";
  for (const EpisodeResult& r : results) {
    out << r.scenario << ',' << r.policy << ',' << r.seed << ','
        << (r.time_to_target_s ? format_number(*r.time_to_target_s) : "") << ','
        << format_number(r.final_accuracy) << ',' << format_number(r.total_time_s) << ','
        << format_number(r.mean_batch_size) << '\n';
  }
}

void write_summary_markdown(std::ostream& out, const std::vector<EpisodeResult>& results) {
  std::vector<std::string> scenarios;
  std::vector<std::string> policies;
  std::map<std::pair<std::string, std::string>, std::vector<const EpisodeResult*>> groups;
  for (const EpisodeResult& r : results) {
    if (std::find(scenarios.begin(), scenarios.end(), r.scenario) == scenarios.end())
      scenarios.push_back(r.scenario);
    if (std::find(policies.begin(), policies.end(), r.policy) == policies.end())
      policies.push_back(r.policy);
    groups[{r.scenario, r.policy}].push_back(&r);
  }
  std::map<std::string, std::vector<double>> ratios;
  out << "# Evaluation\n\nTime to target in simulated seconds (mean [95% bootstrap interval]); a "
         "run "
         "that never reached the target counts with its total time and is marked by reached < "
         "seeds. Ratio: mean time to target over the best static batch's for that scenario.\n";
  for (const std::string& scenario : scenarios) {
    double best_static = 0;
    std::string best_static_name;
    for (const std::string& policy : policies) {
      const auto it = groups.find({scenario, policy});
      if (it == groups.end() || !policy.starts_with("static:")) continue;
      double sum = 0;
      for (const EpisodeResult* r : it->second) sum += time_or_budget(*r);
      const double mean = sum / static_cast<double>(it->second.size());
      if (best_static_name.empty() || mean < best_static) {
        best_static = mean;
        best_static_name = policy;
      }
    }
    out << "\n## " << scenario << "\n\n";
    if (!best_static_name.empty()) out << "Best static batch: " << best_static_name << "\n\n";
    out << "| policy | reached | time_to_target_s | final_accuracy | ratio_to_best_static | "
           "mean_batch_size |\n"
        << "|---|---|---|---|---|---|\n";
    for (const std::string& policy : policies) {
      const auto it = groups.find({scenario, policy});
      if (it == groups.end()) continue;
      std::vector<double> times, accuracies, batches;
      int reached = 0;
      for (const EpisodeResult* r : it->second) {
        times.push_back(time_or_budget(*r));
        accuracies.push_back(r->final_accuracy);
        batches.push_back(r->mean_batch_size);
        reached += r->time_to_target_s.has_value();
      }
      const Interval time = bootstrap_mean(times, 1);
      const Interval accuracy = bootstrap_mean(accuracies, 2);
      const Interval batch = bootstrap_mean(batches, 3);
      std::string ratio = "n/a";
      if (!best_static_name.empty() && best_static > 0) {
        ratios[policy].push_back(time.mean / best_static);
        ratio = fixed(time.mean / best_static, 3);
      }
      out << "| " << policy << " | " << reached << "/" << it->second.size() << " | "
          << interval_text(time, 1) << " | " << interval_text(accuracy, 4) << " | " << ratio
          << " | " << fixed(batch.mean, 1) << " |\n";
    }
  }
  out << "\n## Across scenarios\n\n| policy | geometric mean of ratios |\n|---|---|\n";
  for (const std::string& policy : policies) {
    const auto it = ratios.find(policy);
    if (it == ratios.end()) continue;
    double log_sum = 0;
    for (double r : it->second) log_sum += std::log(r);
    out << "| " << policy << " | "
        << fixed(std::exp(log_sum / static_cast<double>(it->second.size())), 3) << " |\n";
  }
}

}  // namespace dynamix
