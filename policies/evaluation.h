// Evaluation protocol: episodes of each policy on each scenario over seeds, summarized with
// bootstrap intervals and ratios to the best static batch.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "gym/episode_log.h"
#include "policies/policy.h"

namespace dynamix {

/// One row of results.csv.
struct EpisodeResult {
  std::string scenario;
  std::string policy;
  std::uint64_t seed = 0;
  /// Simulated seconds until validation accuracy first reached the target; none if never.
  std::optional<double> time_to_target_s;
  /// Validation accuracy when the budget ran out.
  double final_accuracy = 0;
  double total_time_s = 0;
  /// Mean per-worker batch over the episode's iterations.
  double mean_batch_size = 0;
  /// Σ over decisions of the mean reward over workers.
  double episode_return = 0;
  std::int64_t decisions = 0;
};

/// Runs `policy` in `env` from reset(seed) until the episode ends (at the budget, or at the
/// target when EnvOptions::stop_at_target). Each decision goes to `log` if given, with the
/// action index its batch change corresponds to, if any.
EpisodeResult run_episode(BatchSizeEnv& env, Policy& policy, std::uint64_t seed,
                          DecisionLog* log = nullptr);

/// A mean with a 95% percentile-bootstrap confidence interval.
struct Interval {
  double mean = 0;
  double low = 0;
  double high = 0;
};
Interval bootstrap_mean(std::span<const double> values, std::uint64_t seed, int resamples = 2000);

void write_results_csv(std::ostream& out, const std::vector<EpisodeResult>& results);
/// A Markdown table per scenario (means, 95% intervals, time-to-target ratio to the best static
/// batch of that scenario) and the geometric mean of each policy's ratios across scenarios.
/// Runs that never reached the target count with their total time (a lower bound) and are
/// flagged.
void write_summary_markdown(std::ostream& out, const std::vector<EpisodeResult>& results);

}  // namespace dynamix
