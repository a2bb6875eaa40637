// Variability: lognormal static spread and jitter, Bernoulli outliers, and straggler episodes as
// an alternating renewal process (exponential gaps, exponential durations) in simulated time.
#include "sim/cluster/variability.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace dynamix {
namespace {

/// Draws the episode after `episode` into it; false (and an episode that never comes) once
/// episodes end beyond any simulated time.
bool next_episode(const VariabilityOptions& options, Rng& rng, StragglerEpisode& episode) {
  // Beyond ~30 years of simulated time nothing is simulated; capping also keeps the integer
  // nanoseconds from overflowing.
  constexpr double kNeverSeconds = 1e9;
  const double rate_per_second = options.straggler_rate_per_hour / 3600;
  const double ramps_s = options.straggler_onset_s + options.straggler_recovery_s;
  const double gap_s = rng.exponential(rate_per_second);
  const double duration_s = rng.exponential(1 / options.straggler_mean_duration_s);
  if (gap_s + duration_s + ramps_s > kNeverSeconds ||
      to_seconds(episode.end) + gap_s + duration_s + ramps_s > kNeverSeconds) {
    episode = {kTimeInfinity, kTimeInfinity, kTimeInfinity, kTimeInfinity};
    return false;
  }
  episode.start = episode.end + ceil_seconds(gap_s);
  episode.full_start = episode.start + ceil_seconds(options.straggler_onset_s);
  episode.full_end = episode.full_start + std::max(ceil_seconds(duration_s), Duration{1});
  episode.end = episode.full_end + ceil_seconds(options.straggler_recovery_s);
  return true;
}

/// Moves `episode` on until it ends after `now`.
void advance_episodes(const VariabilityOptions& options, Rng& rng, StragglerEpisode& episode,
                      TimePoint now) {
  if (options.straggler_rate_per_hour <= 0) return;
  while (episode.end <= now) {
    if (!next_episode(options, rng, episode)) return;
  }
}

double slowdown_in(const VariabilityOptions& options, const StragglerEpisode& episode,
                   TimePoint now) {
  if (now < episode.start || now >= episode.end) return 1;
  const double extra = options.straggler_slowdown - 1;
  if (now < episode.full_start) {
    return 1 +
           extra * to_seconds(now - episode.start) / to_seconds(episode.full_start - episode.start);
  }
  if (now < episode.full_end) return options.straggler_slowdown;
  return options.straggler_slowdown -
         extra * to_seconds(now - episode.full_end) / to_seconds(episode.end - episode.full_end);
}

Rng episode_rng(std::uint64_t seed, std::size_t worker) {
  return Rng(seed, stream_id("stragglers", worker));
}

}  // namespace

StragglerTimeline::StragglerTimeline(const VariabilityOptions& options, std::size_t workers,
                                     std::uint64_t seed, TimePoint horizon)
    : options_(options), episodes_(workers) {
  if (options.straggler_rate_per_hour <= 0) return;
  for (std::size_t w = 0; w < workers; ++w) {
    Rng rng = episode_rng(seed, w);
    StragglerEpisode episode;
    while (next_episode(options, rng, episode) && episode.start < horizon) {
      episodes_[w].push_back(episode);
    }
  }
}

double StragglerTimeline::slowdown(std::size_t worker, TimePoint at) const {
  DYNAMIX_CHECK(worker < episodes_.size(), "worker " << worker << " of " << episodes_.size());
  const std::vector<StragglerEpisode>& episodes = episodes_[worker];
  const auto after = std::upper_bound(
      episodes.begin(), episodes.end(), at,
      [](TimePoint time, const StragglerEpisode& episode) { return time < episode.end; });
  return after == episodes.end() ? 1 : slowdown_in(options_, *after, at);
}

double StragglerTimeline::mean_slowdown(std::size_t worker, TimePoint from, TimePoint to) const {
  constexpr int kSamples = 16;
  if (to <= from) return slowdown(worker, from);
  double sum = 0;
  for (int i = 0; i < kSamples; ++i) {
    sum += slowdown(worker, from + (to - from) * (2 * i + 1) / (2 * kSamples));
  }
  return sum / kSamples;
}

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
  DYNAMIX_CHECK(options.minimum_factor > 0 && options.straggler_mean_duration_s > 0 &&
                    options.straggler_onset_s >= 0 && options.straggler_recovery_s >= 0,
                "minimum_factor " << options.minimum_factor << " straggler_mean_duration_s "
                                  << options.straggler_mean_duration_s << " straggler_onset_s "
                                  << options.straggler_onset_s << " straggler_recovery_s "
                                  << options.straggler_recovery_s);
  workers_.reserve(workers);
  for (std::size_t w = 0; w < workers; ++w) {
    Worker worker{Rng(seed, stream_id("variability", w)), episode_rng(seed, w)};
    worker.static_factor = worker.jitter_rng.lognormal_factor(options.gpu_spread);
    worker.outlier = worker.jitter_rng.bernoulli(options.outlier_probability);
    if (worker.outlier) worker.static_factor *= options.outlier_slowdown;
    workers_.push_back(worker);
    advance_episodes(options_, workers_.back().episode_rng, workers_.back().episode, kTimeZero);
  }
}

Variability::Worker& Variability::query(std::size_t worker, TimePoint now) {
  DYNAMIX_CHECK(worker < workers_.size(), "worker " << worker << " of " << workers_.size());
  Worker& state = workers_[worker];
  DYNAMIX_CHECK(now >= state.last_query, "worker " << worker << " queried at "
                                                   << now.time_since_epoch().count() << " ns after "
                                                   << state.last_query.time_since_epoch().count());
  state.last_query = now;
  advance_episodes(options_, state.episode_rng, state.episode, now);
  return state;
}

bool Variability::in_straggler_episode(std::size_t worker, TimePoint now) {
  const StragglerEpisode& episode = query(worker, now).episode;
  return now >= episode.start && now < episode.end;
}

double Variability::straggler_factor(std::size_t worker, TimePoint now) {
  return slowdown_in(options_, query(worker, now).episode, now);
}

double Variability::compute_factor(std::size_t worker, TimePoint now) {
  const double slowdown = straggler_factor(worker, now);
  Worker& state = workers_[worker];
  double factor = state.static_factor * state.jitter_rng.lognormal_factor(options_.jitter_sigma);
  if (slowdown != 1) factor *= slowdown;
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
