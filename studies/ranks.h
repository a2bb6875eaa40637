// The processes of one MPI job (`mpirun -n R dynamix sweep|evaluate ...`), for a command that
// spreads its episodes over them: rank 0 hands out episodes and keeps every record, each rank
// runs episodes on threads of its own. Boost.MPI stays behind this header; a dynamix built
// without MPI refuses to run as one of several ranks.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "studies/episode_feed.h"
#include "studies/interrupt.h"

namespace dynamix {

/// How many processes an MPI launcher (mpirun, mpiexec) started along with this one; 1 when it
/// was not started by one.
int mpi_world_size();

class Ranks {
 public:
  /// Joins the job (threads take turns with MPI). InputError naming `command` when dynamix was
  /// built without MPI.
  explicit Ranks(const std::string& command);
  ~Ranks();
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  /// Rank 0 writes the outputs and says what is wrong with the input; the others stay quiet.
  bool lead() const;
  /// Whether every rank loaded what rank 0 did: `definition` (e.g. run.json) is null on a rank
  /// whose loading failed. Every rank calls it; false everywhere when rank 0 passed null. When
  /// another rank differs, rank 0 throws an InputError naming mpirun and `what` ("sweep").
  bool agree(const std::string* definition, const std::string& what);
  /// Rank 0's `values`, on every rank (every rank calls it).
  std::vector<std::string> share(std::vector<std::string> values);
  /// This rank, 0 … size() − 1, and how many ranks the job has.
  std::size_t rank() const;
  std::size_t size() const;
  /// Every rank's `mine`, in rank order, on every rank (every rank calls it).
  std::vector<std::string> all_gather(const std::string& mine);
  /// On rank 0: hands the episodes of `queue` to the other ranks, whose records reach the
  /// queue's sink, while `local` runs episodes here from the same queue; returns local's status
  /// once every rank is done, after rethrowing the first failure another rank reported.
  int lead_episodes(EpisodeQueue& queue, const std::function<int()>& local);
  /// On the other ranks: `local` runs the episodes rank 0 hands out, then rank 0 hears that
  /// this rank is done. Returns 0, 130 after an interrupt, or 1 after a failure, which rank 0
  /// is told.
  int follow_episodes(const std::function<void(EpisodeFeed&)>& local);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A rank other than 0 stopped (interrupted, or failed and told rank 0): exit with `status`.
struct RankStopped {
  int status;
};

/// Runs episodes 0 … count − 1 of `work` on `jobs` threads here, or over every rank when
/// `ranks` is given. Here and on rank 0: every episode's record, in order, with `tick(kept)`
/// called for the progress line; on another rank: empty records.
std::vector<std::string> spread_episodes(Ranks* ranks, std::size_t count, int jobs,
                                         const EpisodeWork& work, const InterruptScope& interrupt,
                                         const std::function<void(std::size_t)>& tick);

}  // namespace dynamix
