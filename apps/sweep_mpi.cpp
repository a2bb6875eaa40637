// The sweep over MPI: rank 0 serves episode indices and keeps records on a thread of its own
// while its other threads run episodes like every other rank's.
#include "apps/sweep_mpi.h"

#include <atomic>
#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/environment.hpp>
#include <boost/serialization/string.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "apps/interrupt.h"
#include "apps/progress.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

namespace mpi = boost::mpi;

/// Messages to rank 0, and its answer to kNext (the episode index, or -1 for none left).
enum Tag : int { kNext = 1, kAssign, kRecord, kFailed, kDone };

/// FNV-1a of the sweep's definition (run.json): ranks that load different sweeps (other files,
/// another dynamix) are refused. Never 0, which says that rank 0 refused the sweep.
std::uint64_t fingerprint(const std::string& definition) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : definition) hash = (hash ^ c) * 1099511628211ull;
  return hash == 0 ? 1 : hash;
}

/// A rank's episodes come from rank 0 and go back to it; its threads take turns with MPI.
class RemoteFeed : public EpisodeFeed {
 public:
  explicit RemoteFeed(const mpi::communicator& world) : world_(world) {}

  std::optional<std::size_t> next() override {
    if (stopped_) return std::nullopt;
    const std::lock_guard lock(mutex_);
    long long index = -1;
    world_.send(0, kNext);
    world_.recv(0, kAssign, index);
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
  /// Tells rank 0 that this rank's threads have all ended.
  void done() {
    const std::lock_guard lock(mutex_);
    world_.send(0, kDone);
  }

 private:
  const mpi::communicator& world_;
  std::mutex mutex_;
  std::atomic<bool> stopped_{false};
  std::atomic<std::size_t> kept_{0};
};

/// What rank 0 heard from the others: the first failure, said as an error.
struct Served {
  std::exception_ptr failure;
};

/// Answers one message from another rank; false once that rank said it is done.
bool answer(const mpi::communicator& world, const mpi::status& status, EpisodeQueue& queue,
            Served& served) {
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
  } else if (!served.failure) {
    served.failure =
        std::make_exception_ptr(std::runtime_error("rank " + std::to_string(source) + ": " + text));
    queue.stop();
  }
  return true;
}

/// Rank 0's server: answers until every other rank is done. The only thread of rank 0 that
/// calls MPI meanwhile; a record it cannot keep stops the sweep like a failed episode.
void serve_ranks(const mpi::communicator& world, EpisodeQueue& queue, Served& served) {
  for (int ranks = world.size() - 1; ranks > 0;) {
    const auto status = world.iprobe(mpi::any_source, mpi::any_tag);
    if (!status) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    try {
      if (!answer(world, *status, queue, served)) --ranks;
    } catch (...) {
      if (!served.failure) served.failure = std::current_exception();
      queue.stop();
    }
  }
  queue.set_waiting(false);
}

/// Whether every rank loaded the sweep rank 0 did; rank 0 sends 0 when it refused the sweep.
bool same_sweep_everywhere(const mpi::communicator& world, const SweepPlan* plan) {
  std::uint64_t digest = world.rank() == 0 && plan ? fingerprint(describe_sweep(*plan)) : 0;
  mpi::broadcast(world, digest, 0);
  if (digest == 0) return false;
  const bool same = plan != nullptr && fingerprint(describe_sweep(*plan)) == digest;
  return mpi::all_reduce(world, same, std::logical_and<bool>());
}

int lead(const mpi::communicator& world, const std::function<SweepPlan()>& make_plan,
         const SweepRun& run) {
  std::optional<SweepPlan> plan;
  std::optional<SweepFolder> folder;
  try {
    plan.emplace(make_plan());
    folder.emplace(*plan, run);
  } catch (...) {
    same_sweep_everywhere(world, nullptr);
    throw;
  }
  if (!same_sweep_everywhere(world, &*plan)) {
    throw InputError("mpirun", 0, "",
                     "the same sweep on every rank (the same dynamix, scenario files and options)",
                     "ranks that load a different one");
  }
  EpisodeQueue queue(folder->pending, folder->records);
  queue.set_waiting(world.size() > 1);
  Served served;
  int status = 0;
  {
    const std::jthread server([&] { serve_ranks(world, queue, served); });
    status = run_queue(*plan, queue, run, *folder);
  }
  if (served.failure) std::rethrow_exception(served.failure);
  return status != 0 ? status : finish_sweep(*plan, *folder);
}

int follow(const mpi::communicator& world, const std::function<SweepPlan()>& make_plan,
           const SweepRun& run) {
  std::optional<SweepPlan> plan;
  try {
    plan.emplace(make_plan());
  } catch (const InputError&) {
    // Rank 0 loads the same and says what is wrong, or refuses ranks that differ.
  }
  if (!same_sweep_everywhere(world, plan ? &*plan : nullptr)) return 2;
  RemoteFeed feed(world);
  const InterruptScope interrupt;
  Progress progress(std::cerr, {.style = ProgressStyle::kQuiet});
  int status = 0;
  try {
    run_sweep_episodes(*plan, feed, plan->episodes(), run.jobs, interrupt, progress);
  } catch (const Interrupted&) {
    status = 130;
  } catch (const std::exception& error) {
    feed.send(kFailed, error.what());
    status = 1;
  }
  feed.done();
  return status;
}

}  // namespace

int run_sweep_over_mpi(const std::function<SweepPlan()>& make_plan, const SweepRun& run) {
  const mpi::environment environment(mpi::threading::serialized, false);
  if (environment.thread_level() < mpi::threading::serialized) {
    throw std::runtime_error(
        "the MPI library does not let threads take turns (MPI_THREAD_SERIALIZED), which "
        "dynamix sweep needs");
  }
  const mpi::communicator world;
  return world.rank() == 0 ? lead(world, make_plan, run) : follow(world, make_plan, run);
}

}  // namespace dynamix
