// Why identical GPUs do not run at identical speed: static spread, outliers, jitter, stragglers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/random.h"
#include "sim/core/time.h"

namespace dynamix {

/// Knobs of the variability model; all zero (see none()) gives every worker factor 1.
struct VariabilityOptions {
  /// Log-space standard deviation of each GPU's static speed factor (same-model GPUs differ
  /// ~8%: Sinha et al., "Not All GPUs Are Created Equal", SC'22).
  double gpu_spread = 0.08;
  /// Probability that a GPU is a slow outlier (assumed; Sinha et al. report rare outliers).
  double outlier_probability = 0.02;
  /// Slowdown of an outlier GPU (~1.5×: Sinha et al., SC'22).
  double outlier_slowdown = 1.5;
  /// Log-space standard deviation of the per-iteration jitter (assumed).
  double jitter_sigma = 0.02;
  /// Straggler episodes per worker per simulated hour, Poisson arrivals (assumed; the Alibaba
  /// PAI trace shows stragglers appearing mid-run).
  double straggler_rate_per_hour = 0.2;
  /// Slowdown during a straggler episode (assumed).
  double straggler_slowdown = 2.0;
  /// Mean length of an episode at full slowdown, exponentially distributed (assumed).
  double straggler_mean_duration_s = 120;
  /// Precursor: the slowdown grows linearly from 1 to straggler_slowdown over this many seconds
  /// before the full episode (thermal throttling or contention building up); 0 is a step.
  double straggler_onset_s = 0;
  /// Recovery: the slowdown falls linearly back to 1 over this many seconds after the episode;
  /// 0 is a step.
  double straggler_recovery_s = 0;
  /// Lower bound of the combined factor: jitter never makes a GPU twice as fast (assumed).
  double minimum_factor = 0.5;

  /// No variability at all.
  static VariabilityOptions none();
};

/// One straggler episode: the slowdown ramps up from `start` to `full_start`, holds until
/// `full_end`, and ramps down until `end`.
struct StragglerEpisode {
  TimePoint start = kTimeInfinity;
  TimePoint full_start = kTimeInfinity;
  TimePoint full_end = kTimeZero;
  TimePoint end = kTimeZero;
};

/// The straggler episodes a run with these options and seed sees, replayed from the seed up to
/// a horizon: what a hindsight bound may know of the event timeline (a run's episodes depend on
/// simulated time only, not on what the job does).
class StragglerTimeline {
 public:
  StragglerTimeline(const VariabilityOptions& options, std::size_t workers, std::uint64_t seed,
                    TimePoint horizon);
  /// The straggler slowdown of `worker` at `at` (1 outside episodes and beyond the horizon).
  double slowdown(std::size_t worker, TimePoint at) const;
  /// The mean slowdown of `worker` over [from, to), sampled at 16 evenly spaced instants.
  double mean_slowdown(std::size_t worker, TimePoint from, TimePoint to) const;

 private:
  VariabilityOptions options_;
  std::vector<std::vector<StragglerEpisode>> episodes_;
};

/// Per-worker compute-time multipliers, deterministic per (seed, worker).
class Variability {
 public:
  Variability(const VariabilityOptions& options, std::size_t workers, std::uint64_t seed);

  std::size_t workers() const { return workers_.size(); }
  /// The multiplier on `worker`'s compute time for the iteration starting at `now`: static GPU
  /// factor × fresh jitter × straggler slowdown if an episode covers `now`, at least
  /// minimum_factor. Draws jitter, so call once per worker per iteration; `now` must not go
  /// backwards for a worker.
  double compute_factor(std::size_t worker, TimePoint now);
  /// Whether a straggler episode covers `now`, its onset and recovery ramps included (advances
  /// the worker's episode cursor).
  bool in_straggler_episode(std::size_t worker, TimePoint now);
  /// The straggler slowdown of `worker` at `now`: 1 outside episodes, straggler_slowdown at
  /// full strength, in between on the ramps (advances the worker's episode cursor).
  double straggler_factor(std::size_t worker, TimePoint now);
  /// The GPU's static factor: spread × outlier slowdown.
  double static_factor(std::size_t worker) const;
  bool is_outlier(std::size_t worker) const;
  const VariabilityOptions& options() const { return options_; }

 private:
  struct Worker {
    Rng jitter_rng;
    Rng episode_rng;
    double static_factor = 1;
    bool outlier = false;
    StragglerEpisode episode{};
    TimePoint last_query = kTimeZero;
  };
  Worker& query(std::size_t worker, TimePoint now);

  VariabilityOptions options_;
  std::vector<Worker> workers_;
};

}  // namespace dynamix
