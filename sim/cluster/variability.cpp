// Variability: lognormal static spread and jitter, Bernoulli outliers, and straggler episodes as
// an alternating renewal process (exponential gaps, exponential durations) in simulated time.
#include "sim/cluster/variability.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace dynamix {

VariabilityOptions VariabilityOptions::none() {
  VariabilityOptions options;
  options.gpu_spread = 0;
  options.outlier_probability = 0;
  options.jitter_sigma = 0;
  options.straggler_rate_per_hour = 0;
  return options;
}

Variability::Variability(const VariabilityOptions& options, std::size_t workers, std::uint64_t seed)
    : options_(options) {
  DYNAMIX_CHECK(options.minimum_factor > 0 && options.straggler_mean_duration_s > 0,
                "minimum_factor " << options.minimum_factor << " straggler_mean_duration_s "
                                  << options.straggler_mean_duration_s);
  workers_.reserve(workers);
  for (std::size_t w = 0; w < workers; ++w) {
    Worker worker{Rng(seed, stream_id("variability", w)), Rng(seed, stream_id("stragglers", w))};
    worker.static_factor = worker.jitter_rng.lognormal_factor(options.gpu_spread);
    worker.outlier = worker.jitter_rng.bernoulli(options.outlier_probability);
    if (worker.outlier) worker.static_factor *= options.outlier_slowdown;
    workers_.push_back(worker);
    advance_episodes(workers_.back(), kTimeZero);
  }
}

void Variability::advance_episodes(Worker& worker, TimePoint now) const {
  if (options_.straggler_rate_per_hour <= 0) return;
  // Beyond ~30 years of simulated time nothing is simulated; capping also keeps the integer
  // nanoseconds from overflowing.
  constexpr double kNeverSeconds = 1e9;
  const double rate_per_second = options_.straggler_rate_per_hour / 3600;
  while (worker.episode_end <= now) {
    const double gap_s = worker.episode_rng.exponential(rate_per_second);
    const double duration_s =
        worker.episode_rng.exponential(1 / options_.straggler_mean_duration_s);
    if (gap_s + duration_s > kNeverSeconds ||
        to_seconds(worker.episode_end) + gap_s + duration_s > kNeverSeconds) {
      worker.episode_start = kTimeInfinity;
      worker.episode_end = kTimeInfinity;
      return;
    }
    worker.episode_start = worker.episode_end + ceil_seconds(gap_s);
    worker.episode_end = worker.episode_start + std::max(ceil_seconds(duration_s), Duration{1});
  }
}

bool Variability::in_straggler_episode(std::size_t worker, TimePoint now) {
  DYNAMIX_CHECK(worker < workers_.size(), "worker " << worker << " of " << workers_.size());
  Worker& state = workers_[worker];
  DYNAMIX_CHECK(now >= state.last_query, "worker " << worker << " queried at "
                                                   << now.time_since_epoch().count() << " ns after "
                                                   << state.last_query.time_since_epoch().count());
  state.last_query = now;
  advance_episodes(state, now);
  return now >= state.episode_start && now < state.episode_end;
}

double Variability::compute_factor(std::size_t worker, TimePoint now) {
  const bool straggling = in_straggler_episode(worker, now);
  Worker& state = workers_[worker];
  double factor = state.static_factor * state.jitter_rng.lognormal_factor(options_.jitter_sigma);
  if (straggling) factor *= options_.straggler_slowdown;
  return std::max(factor, options_.minimum_factor);
}

double Variability::static_factor(std::size_t worker) const {
  DYNAMIX_CHECK(worker < workers_.size(), "worker " << worker << " of " << workers_.size());
  return workers_[worker].static_factor;
}

bool Variability::is_outlier(std::size_t worker) const {
  DYNAMIX_CHECK(worker < workers_.size(), "worker " << worker << " of " << workers_.size());
  return workers_[worker].outlier;
}

}  // namespace dynamix
