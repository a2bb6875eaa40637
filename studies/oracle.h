// The oracle: a search over global-batch schedules (one to three phases, speed-balanced split)
// for the fastest that reaches the target on every evaluation seed, an upper bound for what a
// batch-size policy can do on a scenario (docs/evaluation.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "policies/baselines/baselines.h"

namespace dynamix {

struct OracleOptions {
  /// Per-worker mean batches a phase may use (the global batch is this × workers); levels above
  /// the environment's max_batch are dropped.
  std::vector<int> levels = {32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024};
  /// Where a phase may start, as fractions of the epochs the best one-phase schedule took to
  /// reach the target.
  std::vector<double> switch_fractions = {0.1, 0.2, 0.35, 0.5, 0.7};
  /// Schedules kept after screening on the first seed, then run on every seed; and the two-phase
  /// schedules extended to three phases.
  int finalists = 6;
  /// Search "hindsight:" schedules, whose split knows each run's straggler timeline, instead of
  /// "schedule:" ones that split by measured speed.
  bool hindsight = false;
  /// Episodes run at once (threads); results do not depend on it.
  int jobs = 1;
  /// Set on every episode's environment (e.g. to stop on an interrupt by throwing).
  IterationObserver observer;
};

/// One schedule's outcome over the seeds it ran on.
struct ScheduleOutcome {
  std::vector<SchedulePolicy::Phase> phases;
  std::string name;
  int seeds = 0;
  int reached = 0;
  /// Mean time to target when every seed reached it; infinity otherwise.
  double mean_time_s = 0;
  /// Mean epochs at the target over the seeds that reached it.
  double mean_epochs = 0;
};

struct OracleResult {
  /// Every schedule tried, in the order tried; screened ones ran on one seed.
  std::vector<ScheduleOutcome> tried;
  /// The fastest schedule that reached the target on every seed, if any.
  std::optional<ScheduleOutcome> best;
};

/// Searches schedules on `scenario` with `env_options` (stop_at_target is forced on) over seeds
/// first_seed … first_seed + seeds − 1. `progress(done, total)` is called after each batch of
/// episodes. Deterministic: the same inputs give the same result whatever `options.jobs`.
OracleResult search_schedules(const std::shared_ptr<const Scenario>& scenario,
                              const EnvOptions& env_options, std::uint64_t first_seed, int seeds,
                              const OracleOptions& options,
                              const std::function<void(int, int)>& progress = {});

/// Calls `work(i)` for i in [0, count) on up to `jobs` threads and rethrows the first exception
/// (by index) after every thread has stopped.
void parallel_for(int count, int jobs, const std::function<void(int)>& work);

}  // namespace dynamix
