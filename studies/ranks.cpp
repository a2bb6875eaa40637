// Rank 0 serves episode indices and keeps records on a thread of its own while its other
// threads run episodes like every other rank's; without MPI, Ranks only refuses.
#include "studies/ranks.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

#include "dynamix_config.h"
#include "sim/io/input_error.h"

#ifdef DYNAMIX_MPI
#include <atomic>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "sim/io/hash.h"
#endif

namespace dynamix {

int mpi_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* value = std::getenv(name);
    if (value != nullptr) return std::max(1, std::atoi(value));
  }
  return 1;
}

#ifdef DYNAMIX_MPI
namespace {

namespace mpi = boost::mpi;

/// Messages to rank 0, and its answer to kNext (the episode index, or -1 for none left).
enum Tag : int { kNext = 1, kAssign, kRecord, kFailed, kDone };

/// FNV-1a of a definition; never 0, which says that rank 0 could not load its own.
std::uint64_t fingerprint(const std::string& definition) {
  const std::uint64_t hash = fnv1a(definition);
  return hash == 0 ? 1 : hash;
}

/// A rank's episodes come from rank 0 and go back to it; its threads take turns with MPI.
class RemoteFeed : public EpisodeFeed {
 public:
  explicit RemoteFeed(const mpi::communicator& world) : world_(world) {}

  /// Asks for the episode after this one at once, so that its index is here by the time a
  /// thread wants it instead of that thread waiting (and MPI spinning) for rank 0's answer.
  std::optional<std::size_t> next() override {
    if (stopped_) return std::nullopt;
    const std::lock_guard lock(mutex_);
    if (!asked_) world_.send(0, kNext);
    long long index = -1;
    world_.recv(0, kAssign, index);
    asked_ = index >= 0;
    if (asked_) world_.send(0, kNext);
    if (index < 0) return std::nullopt;
    return static_cast<std::size_t>(index);
  }
  void keep(std::size_t index, const std::string& record) override {
    send(kRecord, std::to_string(index) + "\n" + record);
    ++kept_;
  }
  void stop() override { stopped_ = true; }
  std::size_t kept() const override { return kept_; }
  void send(Tag tag, const std::string& text) {
    const std::lock_guard lock(mutex_);
    world_.send(0, tag, text);
  }
  /// Tells rank 0 that this rank's threads have all ended, after taking the answer to a request
  /// still open (an episode left unrun after a stop; --resume runs it).
  void done() {
    const std::lock_guard lock(mutex_);
    if (asked_) {
      long long index = -1;
      world_.recv(0, kAssign, index);
      asked_ = false;
    }
    world_.send(0, kDone);
  }

 private:
  const mpi::communicator& world_;
  std::mutex mutex_;
  std::atomic<bool> stopped_{false};
  std::atomic<std::size_t> kept_{0};
  /// A request for the next episode is open (guarded by mutex_).
  bool asked_ = false;
};

/// Answers one message from another rank; false once that rank said it is done. The first
/// failure a rank reports is kept in `failure` and stops the queue.
bool answer(const mpi::communicator& world, const mpi::status& status, EpisodeQueue& queue,
            std::exception_ptr& failure) {
  const int source = status.source();
  if (status.tag() == kNext) {
    world.recv(source, kNext);
    const std::optional<std::size_t> index = queue.next();
    world.send(source, kAssign, index ? static_cast<long long>(*index) : -1LL);
    return true;
  }
  if (status.tag() == kDone) {
    world.recv(source, kDone);
    return false;
  }
  std::string text;
  world.recv(source, status.tag(), text);
  if (status.tag() == kRecord) {
    const std::size_t newline = text.find('\n');
    queue.keep(std::stoull(text.substr(0, newline)), text.substr(newline + 1));
  } else if (!failure) {
    failure =
        std::make_exception_ptr(std::runtime_error("rank " + std::to_string(source) + ": " + text));
    queue.stop();
  }
  return true;
}

/// Rank 0's server: answers until every other rank is done. The only thread of rank 0 that
/// calls MPI meanwhile; a record it cannot keep stops the queue like a failed episode.
void serve_ranks(const mpi::communicator& world, EpisodeQueue& queue, std::exception_ptr& failure) {
  for (int ranks = world.size() - 1; ranks > 0;) {
    const auto status = world.iprobe(mpi::any_source, mpi::any_tag);
    if (!status) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    try {
      if (!answer(world, *status, queue, failure)) --ranks;
    } catch (...) {
      if (!failure) failure = std::current_exception();
      queue.stop();
    }
  }
  queue.set_waiting(false);
}

}  // namespace

struct Ranks::Impl {
  mpi::environment environment{mpi::threading::serialized, false};
  mpi::communicator world;
};

Ranks::Ranks(const std::string& /*command*/) : impl_(std::make_unique<Impl>()) {
  if (impl_->environment.thread_level() < mpi::threading::serialized) {
    throw std::runtime_error(
        "the MPI library does not let threads take turns (MPI_THREAD_SERIALIZED), which "
        "dynamix needs to spread episodes over ranks");
  }
}

Ranks::~Ranks() = default;

bool Ranks::lead() const { return impl_->world.rank() == 0; }

bool Ranks::agree(const std::string* definition, const std::string& what) {
  std::uint64_t digest = lead() && definition ? fingerprint(*definition) : 0;
  mpi::broadcast(impl_->world, digest, 0);
  if (digest == 0) return false;
  const bool same = definition != nullptr && fingerprint(*definition) == digest;
  if (mpi::all_reduce(impl_->world, same, std::logical_and<bool>())) return true;
  if (!lead()) return false;
  throw InputError("mpirun", 0, "",
                   "the same " + what +
                       " on every rank (the same dynamix, scenario and policy files and options)",
                   "ranks that load a different one");
}

std::vector<std::string> Ranks::share(std::vector<std::string> values) {
  mpi::broadcast(impl_->world, values, 0);
  return values;
}

std::size_t Ranks::rank() const { return static_cast<std::size_t>(impl_->world.rank()); }
std::size_t Ranks::size() const { return static_cast<std::size_t>(impl_->world.size()); }

std::vector<std::string> Ranks::all_gather(const std::string& mine) {
  std::vector<std::string> all;
  mpi::all_gather(impl_->world, mine, all);
  return all;
}

int Ranks::lead_episodes(EpisodeQueue& queue, const std::function<int()>& local) {
  queue.set_waiting(impl_->world.size() > 1);
  std::exception_ptr failure;
  int status = 0;
  {
    const std::jthread server([&] { serve_ranks(impl_->world, queue, failure); });
    status = local();
  }
  if (failure) std::rethrow_exception(failure);
  return status;
}

int Ranks::follow_episodes(const std::function<void(EpisodeFeed&)>& local) {
  RemoteFeed feed(impl_->world);
  int status = 0;
  try {
    local(feed);
  } catch (const Interrupted&) {
    status = 130;
  } catch (const std::exception& error) {
    feed.send(kFailed, error.what());
    status = 1;
  }
  feed.done();
  return status;
}

#else

struct Ranks::Impl {};

Ranks::Ranks(const std::string& command) {
  throw InputError("mpirun", 0, "",
                   "a dynamix built with MPI (Boost.MPI; meson setup -Dmpi=enabled) to spread "
                   "dynamix " +
                       command + " over ranks",
                   std::to_string(mpi_world_size()) + " ranks of a dynamix built without it");
}

Ranks::~Ranks() = default;
bool Ranks::lead() const { return true; }
bool Ranks::agree(const std::string*, const std::string&) { return false; }
std::vector<std::string> Ranks::share(std::vector<std::string> values) { return values; }
std::size_t Ranks::rank() const { return 0; }
std::size_t Ranks::size() const { return 1; }
std::vector<std::string> Ranks::all_gather(const std::string& mine) { return {mine}; }
int Ranks::lead_episodes(EpisodeQueue&, const std::function<int()>& local) { return local(); }
int Ranks::follow_episodes(const std::function<void(EpisodeFeed&)>&) { return 1; }

#endif

std::vector<std::string> spread_episodes(Ranks* ranks, std::size_t count, int jobs,
                                         const EpisodeWork& work, const InterruptScope& interrupt,
                                         const std::function<void(std::size_t)>& tick) {
  std::vector<std::string> records(count);
  if (ranks != nullptr && !ranks->lead()) {
    const int status = ranks->follow_episodes(
        [&](EpisodeFeed& feed) { run_feed(feed, count, jobs, work, interrupt, [] {}); });
    if (status != 0) throw RankStopped{status};
    return records;
  }
  std::vector<std::size_t> all(count);
  std::iota(all.begin(), all.end(), std::size_t{0});
  EpisodeQueue queue(std::move(all),
                     [&records](std::size_t i, const std::string& record) { records[i] = record; });
  const auto local = [&] {
    run_feed(queue, count, jobs, work, interrupt, [&] { tick(queue.kept()); });
    return 0;
  };
  if (ranks != nullptr) {
    ranks->lead_episodes(queue, local);
  } else {
    local();
  }
  return records;
}

}  // namespace dynamix
