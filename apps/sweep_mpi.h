// `mpirun -n R dynamix sweep ...`: the episodes of one sweep spread over MPI ranks (Boost.MPI),
// built with -Dmpi (apps/meson.build). Every rank loads the same plan; rank 0 owns the output
// folder, hands out episodes one at a time to whichever thread of whichever rank asks, and
// keeps their records, so results.csv has the same bytes as a single-process run.
#pragma once

#include <functional>

#include "apps/sweep.h"
#include "apps/sweep_engine.h"

namespace dynamix {

/// Runs the sweep `make_plan` gives on every rank of MPI_COMM_WORLD, --jobs threads on each.
/// Rank 0 writes the folder and reports errors; the other ranks print nothing.
int run_sweep_over_mpi(const std::function<SweepPlan()>& make_plan, const SweepRun& run);

}  // namespace dynamix
