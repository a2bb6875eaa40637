#include "studies/episode_feed.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

/// Thrown inside an episode that another thread's failure made pointless.
struct Cancelled {};

}  // namespace

void require_episodes_fit(const std::string& option, std::initializer_list<std::size_t> factors,
                          const std::string& counted) {
  std::size_t episodes = 1;
  for (const std::size_t factor : factors) {
    episodes = factor != 0 && episodes > std::numeric_limits<std::size_t>::max() / factor
                   ? std::numeric_limits<std::size_t>::max()
                   : episodes * factor;
  }
  if (episodes <= kMaxEpisodes) return;
  throw InputError(option, 0, "",
                   "at most " + std::to_string(kMaxEpisodes) +
                       " episodes in all (each one's result is kept in memory until the results "
                       "are written)",
                   counted);
}

EpisodeQueue::EpisodeQueue(std::vector<std::size_t> pending, RecordSink sink)
    : pending_(std::move(pending)), sink_(std::move(sink)) {}

std::optional<std::size_t> EpisodeQueue::next() {
  if (stopped_) return std::nullopt;
  const std::size_t i = next_++;
  if (i >= pending_.size()) return std::nullopt;
  return pending_[i];
}

void EpisodeQueue::keep(std::size_t index, const std::string& record) {
  sink_(index, record);
  ++kept_;
}

std::size_t feed_threads(int jobs, std::size_t expected) {
  return std::min<std::size_t>(jobs, std::max<std::size_t>(expected, 1));
}

void run_feed(EpisodeFeed& feed, std::size_t expected, int jobs, const EpisodeWork& work,
              const InterruptScope& interrupt, const std::function<void()>& tick) {
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::condition_variable changed;
  std::exception_ptr failure;
  const auto check_stop = [&] {
    if (stop.load(std::memory_order_relaxed)) throw Cancelled{};
    interrupt.check();
  };
  const auto fail = [&] {
    const std::lock_guard lock(mutex);
    if (!failure) failure = std::current_exception();
    stop = true;
    feed.stop();
  };
  const auto threads_wanted = static_cast<int>(feed_threads(jobs, expected));
  int running = threads_wanted;
  const auto run = [&] {
    try {
      for (std::optional<std::size_t> i; !stop && (i = feed.next());)
        feed.keep(*i, work(*i, check_stop));
    } catch (const Cancelled&) {
    } catch (...) {
      fail();
    }
    const std::lock_guard lock(mutex);
    --running;
    changed.notify_all();
  };
  std::vector<std::jthread> threads;
  threads.reserve(static_cast<std::size_t>(threads_wanted));
  for (int t = 0; t < threads_wanted; ++t) threads.emplace_back(run);
  for (std::unique_lock lock(mutex);;) {
    changed.wait_for(lock, std::chrono::milliseconds(500));
    tick();
    if (running == 0 && !feed.waiting()) break;
    if (interrupt.requested() && !stop) {
      stop = true;
      feed.stop();
    }
  }
  threads.clear();
  if (failure) std::rethrow_exception(failure);
  interrupt.check();
}

}  // namespace dynamix
