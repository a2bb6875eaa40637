// One simulated data-parallel training job, advanced one BSP iteration at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "sim/cluster/collective.h"
#include "sim/cluster/preemption.h"
#include "sim/cluster/variability.h"
#include "sim/core/simulator.h"
#include "sim/network/colocated_traffic.h"
#include "sim/network/network.h"
#include "sim/scenario/scenario.h"
#include "sim/training/dynamics.h"

namespace dynamix {

/// What one worker did in one iteration (one row of iterations.csv).
struct WorkerIteration {
  int batch_size = 0;
  double load_s = 0;
  double compute_s = 0;
  double wait_s = 0;
  double comm_s = 0;
  double bytes_sent = 0;
  /// Over the network, from its ring neighbour or its parameter servers' pulls.
  double bytes_received = 0;
  double retransmits = 0;
  double timeouts = 0;
  double throughput_gbps = 0;
  double cpu_time_ratio = 0;
  double memory_util = 0;
  double grad_std_norm = 0;
  double grad_var_norm = 0;
  bool straggling = false;
  /// False while the worker is preempted: it ran nothing and every other field is 0.
  bool present = true;
};

/// One BSP iteration: every worker loads and computes its batch, waits at the barrier for the
/// slowest, then all synchronize; the iteration ends when synchronization ends.
struct IterationRecord {
  std::int64_t iteration = 0;
  TimePoint start;
  TimePoint end;
  IterationStats training;
  /// Measured when this iteration completed an epoch.
  std::optional<double> validation_accuracy;
  std::vector<WorkerIteration> workers;
};

class TrainingRun {
 public:
  TrainingRun(const Scenario& scenario, std::uint64_t seed);
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  std::size_t workers() const { return nodes_.size(); }
  const NodeSpec& node(std::size_t worker) const { return nodes_[worker]; }
  /// The largest batch that fits in the worker's GPU memory.
  int max_batch(std::size_t worker) const { return max_batches_[worker]; }
  const Workload& workload() const { return workload_; }
  const TrainingOptions& training_options() const { return training_; }

  /// Runs one iteration with these per-worker batches (each member's in [1, max_batch]; a
  /// preempted worker's entry is ignored), then applies the membership changes due at its end.
  const IterationRecord& step(std::span<const int> batches);

  /// The workers that run the next iteration, in ring order: all of them unless preempted.
  std::span<const std::size_t> members() const { return members_; }
  bool is_member(std::size_t worker) const { return present_[worker]; }
  /// When `worker` leaves: its departure once its notice has come, kTimeInfinity before.
  TimePoint departure(std::size_t worker) const { return departures_[worker]; }
  /// Whether the last step() changed the members (elastic mode; a pause changes none).
  bool membership_changed() const { return membership_changed_; }
  /// The time the job stood still after the last iteration: reconfiguration, or a pause.
  Duration last_stall() const { return last_stall_; }
  const PreemptionSchedule& preemption() const { return preemption_; }

  TimePoint now() const { return sim_.now(); }
  std::int64_t iterations() const { return iteration_; }
  double epochs() const { return dynamics_.epochs(); }
  /// Simulator events fired so far (flows, timers, barriers): the cost of the run.
  std::uint64_t events() const { return sim_.events_fired(); }
  /// The latest validation accuracy, if any epoch has completed.
  std::optional<double> validation_accuracy() const { return validation_accuracy_; }
  /// The validation accuracy the model stands at now, without a validation set's sampling
  /// noise: what only a simulator knows (a training reward may use it; no observation does).
  double expected_accuracy() const { return dynamics_.validation_accuracy(); }
  std::optional<TimePoint> time_to_target() const { return time_to_target_; }
  /// The LR factor the last iteration applied, and the bounds the next ones' are held within
  /// (TrainingDynamics::bound_lr_factor: serve's guard rail).
  double lr_factor() const { return dynamics_.lr_factor(); }
  void bound_lr_factor(double low, double high) { dynamics_.bound_lr_factor(low, high); }
  bool reached_target() const { return time_to_target_.has_value(); }
  /// True once the scenario's epoch, time or iteration budget is spent, or no worker is left.
  bool budget_exhausted() const;
  /// This run's straggler episodes up to its time budget (or 10^6 s), replayed from its seed:
  /// the event timeline a hindsight bound may use.
  StragglerTimeline straggler_timeline() const;

 private:
  void plan_buckets(TimePoint start);
  /// All-reduces bucket `bucket`, then the next one once it is ready; stops after the last.
  void start_bucket(std::size_t bucket);
  /// Applies the notices, departures and returns due at an iteration boundary.
  void update_membership();
  /// Whether each worker is a member at `now`: it has not left, and does not leave before an
  /// iteration as long as the last one would end (the job drains it at the notice).
  std::vector<bool> members_at(TimePoint now);
  /// Waits until the first absent worker of `present` returns; false if none ever does.
  bool wait_for_return(const std::vector<bool>& present);
  /// Advances the clock by `stall`, the job doing nothing.
  void stand_still(Duration stall);
  void rebuild_synchronizer();
  /// The members' rows after synchronization: wait, communication, gradient statistics.
  void fill_sync_rows(double barrier_s, double iteration_s);
  /// Ends the iteration after the last bucket's synchronization and the step overhead.
  void finish_step();
  /// The training dynamics' step over the members' batches.
  IterationStats train(std::span<const int> batches);

  Simulator sim_;
  Topology topology_;
  Network network_;
  std::unique_ptr<Synchronizer> synchronizer_;
  std::unique_ptr<ColocatedTraffic> colocated_;
  SyncOptions sync_options_;
  std::vector<std::size_t> worker_hosts_;
  std::vector<std::size_t> server_hosts_;
  Variability variability_;
  /// The run's seed, from which straggler_timeline() replays variability_'s episodes.
  std::uint64_t seed_;
  PreemptionSchedule preemption_;
  Workload workload_;
  ModelCost cost_;
  TrainingOptions training_;
  std::optional<std::int64_t> max_iterations_;
  TrainingDynamics dynamics_;
  std::vector<NodeSpec> nodes_;
  std::vector<int> max_batches_;
  double backward_fraction_;
  Duration bucket_overhead_;
  /// The gradient's DDP buckets in all-reduce order, and when each is ready this iteration.
  std::vector<double> bucket_bytes_;
  std::vector<TimePoint> bucket_ready_;

  std::int64_t iteration_ = 0;
  std::optional<double> validation_accuracy_;
  std::optional<TimePoint> time_to_target_;
  IterationRecord record_;
  std::vector<double> ready_s_;
  std::vector<double> grad_std_;
  std::vector<double> grad_var_;
  std::vector<WorkerSyncStats> sync_stats_;
  std::vector<std::size_t> members_;
  std::vector<bool> present_;
  std::vector<TimePoint> departures_;
  /// Scratch: the members' batches and gradient statistics, for the training dynamics.
  std::vector<int> member_batches_;
  std::vector<double> member_std_;
  std::vector<double> member_var_;
  Duration last_iteration_{};
  Duration last_stall_{};
  bool membership_changed_ = false;
};

/// How many times as long `iterations` iterations at `batches` take on `scenario` as on the same
/// cluster without packet loss (Topology::without_loss; incast and everything else kept), both
/// from `scenario.seed`: 1 on a lossless cluster, without running it.
double loss_slowdown(const Scenario& scenario, std::span<const int> batches,
                     std::int64_t iterations);

}  // namespace dynamix
