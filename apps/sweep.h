// `dynamix sweep`: what-if studies over a grid of scenario values × policies × seeds, on local
// threads or spread over MPI ranks (studies/ranks.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/command.h"
#include "studies/cell_records.h"
#include "studies/run_directory.h"
#include "studies/sweep_engine.h"

namespace dynamix {

int run_sweep(const std::vector<std::string>& args);
inline constexpr Command kSweepCommand{
    "sweep", "run a grid of scenario values × policies × seeds, resumable", run_sweep};

/// How to run a sweep: the options beside its definition.
struct SweepRun {
  std::string out;
  bool resume = false;
  int jobs = 1;
  std::int64_t limit = 0;
  bool quiet = false;
};

/// The sweep's output folder (OUT.partial until the outputs are written), checked against the
/// definition on --resume, with the episode records and the episodes still to run.
struct SweepFolder {
  SweepFolder(const SweepPlan& plan, const SweepRun& run);

  RunDirectory directory;
  CellRecords records;
  /// The episodes without a record, at most --max-episodes of them.
  std::vector<std::size_t> pending;
  /// How many had no record before the limit.
  std::size_t left = 0;
};

/// Runs the episodes of `queue` on --jobs threads: 130 after an interrupt, which keeps the
/// finished records and says how to resume; 0 otherwise.
int run_queue(const SweepPlan& plan, EpisodeQueue& queue, const SweepRun& run,
              const SweepFolder& folder);
/// Once every episode has a record: the outputs, the committed folder and the summary printed.
/// Otherwise says how many are recorded and how to go on.
int finish_sweep(const SweepPlan& plan, SweepFolder& folder);

}  // namespace dynamix
