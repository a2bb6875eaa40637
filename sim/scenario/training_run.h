// One simulated data-parallel training job, advanced one BSP iteration at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "sim/cluster/collective.h"
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

  /// Runs one iteration with these per-worker batches (each in [1, max_batch]).
  const IterationRecord& step(std::span<const int> batches);

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
  bool reached_target() const { return time_to_target_.has_value(); }
  /// True once the scenario's epoch, time or iteration budget is spent.
  bool budget_exhausted() const;
  /// This run's straggler episodes up to its time budget (or 10^6 s), replayed from its seed:
  /// the event timeline a hindsight bound may use.
  StragglerTimeline straggler_timeline() const;

 private:
  void plan_buckets(TimePoint start);
  /// All-reduces bucket `bucket`, then the next one once it is ready; stops after the last.
  void start_bucket(std::size_t bucket);

  Simulator sim_;
  Topology topology_;
  Network network_;
  std::unique_ptr<Synchronizer> synchronizer_;
  std::unique_ptr<ColocatedTraffic> colocated_;
  Variability variability_;
  VariabilityOptions variability_options_;
  std::uint64_t seed_;
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
};

}  // namespace dynamix
