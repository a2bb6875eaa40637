// Workers that a cloud provider takes back: a notice, a departure, and maybe a return.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/random.h"
#include "sim/core/time.h"

namespace dynamix {

/// What the job does while a worker is gone.
enum class PreemptionMode {
  /// The job continues on the survivors, data re-sharded: the global batch is what the
  /// survivors' batches sum to (TorchElastic, Varuna, Oobleck).
  kElastic,
  /// The job stops until every worker is back (a fixed world size, as plain DDP needs).
  kPause,
};

/// Knobs of the preemption model; a rate of 0 (the default) preempts nobody.
struct PreemptionOptions {
  /// Preemptions per worker per simulated hour, Poisson arrivals (assumed per scenario).
  double rate_per_hour = 0;
  /// Seconds between the notice and the departure (AWS EC2 spot: a two-minute interruption
  /// notice; GCP preemptible and spot VMs: 30 s).
  double notice_s = 120;
  /// Whether a preempted worker comes back.
  bool rejoin = true;
  /// Mean time a worker is away before it returns, exponentially distributed (assumed).
  double mean_absence_s = 300;
  /// Time the job stands still each time its membership changes: rendezvous, process-group
  /// rebuild, state reload (assumed; see docs/simulator.md).
  double reconfiguration_s = 30;
  PreemptionMode mode = PreemptionMode::kElastic;

  bool enabled() const { return rate_per_hour > 0; }
};

/// One absence of one worker.
struct Preemption {
  std::size_t worker = 0;
  TimePoint notice;
  TimePoint departure;
  /// kTimeInfinity when the worker never returns.
  TimePoint comeback = kTimeInfinity;

  bool operator==(const Preemption&) const = default;
};

/// Every worker's absences, an alternating renewal process per worker (exponential time to the
/// next notice from the last return, exponential absence), deterministic per (seed, worker).
class PreemptionSchedule {
 public:
  PreemptionSchedule(const PreemptionOptions& options, std::size_t workers, std::uint64_t seed);

  const PreemptionOptions& options() const { return options_; }
  /// The worker's absence that has not ended by `now` (its cursor moves on past absences, so
  /// `now` must not go backwards for a worker); notice kTimeInfinity when none is due.
  const Preemption& current(std::size_t worker, TimePoint now);
  /// Every absence that starts (notice) before `until`, ordered by notice then worker; the
  /// schedule's own cursors do not move.
  std::vector<Preemption> timeline(TimePoint until) const;

 private:
  struct Cursor {
    Rng rng;
    Preemption absence;
  };
  void draw_next(Cursor& cursor) const;

  PreemptionOptions options_;
  std::vector<Cursor> cursors_;
};

}  // namespace dynamix
