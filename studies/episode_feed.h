// Episodes (or any units of work) handed out to threads, here or on other MPI ranks
// (studies/ranks.h), each finished one kept as a text record: the machinery `dynamix sweep` and
// `dynamix evaluate` share.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "studies/interrupt.h"

namespace dynamix {

/// Where the threads of run_feed take their episodes and leave their records. Every member may
/// be called from any thread.
class EpisodeFeed {
 public:
  virtual ~EpisodeFeed() = default;
  /// The next episode to run; none once all are handed out or after stop().
  virtual std::optional<std::size_t> next() = 0;
  /// Keeps the record of a finished episode.
  virtual void keep(std::size_t index, const std::string& record) = 0;
  /// Hands out no more episodes.
  virtual void stop() = 0;
  /// How many episodes were kept so far, here and by other processes this feed serves.
  virtual std::size_t kept() const = 0;
  /// Whether episodes handed to other processes may still come back.
  virtual bool waiting() const { return false; }
};

/// What happens to a kept record; called from any thread, once per episode.
using RecordSink = std::function<void(std::size_t index, const std::string& record)>;

/// The episodes `pending`, handed out in order, their records given to `sink`.
class EpisodeQueue : public EpisodeFeed {
 public:
  EpisodeQueue(std::vector<std::size_t> pending, RecordSink sink);
  std::optional<std::size_t> next() override;
  void keep(std::size_t index, const std::string& record) override;
  void stop() override { stopped_ = true; }
  std::size_t kept() const override { return kept_; }
  bool waiting() const override { return waiting_; }
  /// Set while other processes run episodes of this queue (the MPI ranks rank 0 serves).
  void set_waiting(bool waiting) { waiting_ = waiting; }
  std::size_t size() const { return pending_.size(); }

 private:
  const std::vector<std::size_t> pending_;
  const RecordSink sink_;
  std::atomic<std::size_t> next_{0};
  std::atomic<std::size_t> kept_{0};
  std::atomic<bool> stopped_{false};
  std::atomic<bool> waiting_{false};
};

/// Runs one episode and returns its record; `check_stop` throws once the run is stopping (an
/// interrupt, another thread's failure), for the episode's simulator to call now and then.
using EpisodeWork =
    std::function<std::string(std::size_t index, const std::function<void()>& check_stop)>;

/// The most episodes one run holds: every finished episode's record and result stay in memory
/// (about 1 KB) until the results are written, so the bound keeps a run near 1 GB.
inline constexpr std::size_t kMaxEpisodes = 1'000'000;

/// InputError on `option` unless the product of `factors` (the run's episodes: scenarios,
/// policies, seeds, ...) is at most kMaxEpisodes; `counted` says what the factors are
/// ("2 scenarios × 8 policies × 1000000000 seeds").
void require_episodes_fit(const std::string& option, std::initializer_list<std::size_t> factors,
                          const std::string& counted);

/// The threads run_feed starts: min(jobs, expected), at least 1.
std::size_t feed_threads(int jobs, std::size_t expected);

/// Runs the episodes `feed` hands out on feed_threads(jobs, expected) threads, each record given
/// back to `feed`, until the feed has no more and waits for nothing. `tick` runs on the calling
/// thread every half second and once at the end (for a progress line). The first failure (an
/// interrupt included) stops the others and is rethrown once all have ended.
void run_feed(EpisodeFeed& feed, std::size_t expected, int jobs, const EpisodeWork& work,
              const InterruptScope& interrupt, const std::function<void()>& tick);

}  // namespace dynamix
