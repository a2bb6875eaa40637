// TrainingRun: BSP iterations timed by the cluster model, progress by the training dynamics.
#include "sim/scenario/training_run.h"

#include <algorithm>

#include "sim/cluster/compute.h"
#include "sim/core/check.h"

namespace dynamix {

TrainingRun::TrainingRun(const Scenario& scenario, std::uint64_t seed)
    : topology_(scenario.topology),
      network_(sim_, topology_.links(), scenario.network),
      sync_options_(scenario.sync),
      worker_hosts_(scenario.worker_hosts),
      server_hosts_(scenario.server_hosts),
      variability_(scenario.variability, scenario.worker_hosts.size(), seed),
      seed_(seed),
      preemption_(scenario.preemption, scenario.worker_hosts.size(), seed),
      workload_(scenario.workload),
      cost_(scenario.cost),
      training_(scenario.training),
      max_iterations_(scenario.max_iterations),
      dynamics_(scenario.workload, scenario.training, scenario.worker_hosts.size(), seed),
      backward_fraction_(scenario.sync.backward_fraction),
      // One rank has nothing to synchronize, so DDP does no bucket work.
      bucket_overhead_(scenario.worker_hosts.size() > 1 ? scenario.sync.bucket_overhead
                                                        : Duration{}) {
  synchronizer_ = std::make_unique<Synchronizer>(sim_, network_, topology_, scenario.sync,
                                                 scenario.worker_hosts, scenario.server_hosts);
  for (const auto& attachment : scenario.traces)
    network_.add_trace(attachment.link, attachment.trace);
  if (!scenario.colocated_jobs.empty()) {
    colocated_ = std::make_unique<ColocatedTraffic>(sim_, network_, scenario.colocated_jobs, seed);
  }
  for (std::size_t host : scenario.worker_hosts) {
    nodes_.push_back(topology_.hosts()[host]);
    max_batches_.push_back(dynamix::max_batch(nodes_.back(), cost_));
  }
  const double gradient_bytes = cost_.parameters * cost_.bytes_per_parameter;
  bucket_bytes_ = gradient_buckets(gradient_bytes, scenario.sync.bucket_bytes);
  bucket_ready_.resize(bucket_bytes_.size());
  const std::size_t p = nodes_.size();
  record_.workers.resize(p);
  ready_s_.resize(p);
  grad_std_.resize(p);
  grad_var_.resize(p);
  sync_stats_.resize(p);
  present_.assign(p, true);
  departures_.assign(p, kTimeInfinity);
  for (std::size_t w = 0; w < p; ++w) members_.push_back(w);
  update_membership();
  membership_changed_ = false;
}

std::vector<bool> TrainingRun::members_at(TimePoint now) {
  std::vector<bool> present(nodes_.size());
  for (std::size_t w = 0; w < present.size(); ++w) {
    const Preemption& absence = preemption_.current(w, now);
    present[w] = absence.departure > now + last_iteration_;
    departures_[w] = absence.notice <= now ? absence.departure : kTimeInfinity;
  }
  return present;
}

void TrainingRun::stand_still(Duration stall) {
  last_stall_ += stall;
  if (stall <= Duration{}) return;
  sim_.schedule_at(sim_.now() + stall, [this] { sim_.stop(); });
  sim_.run();
}

void TrainingRun::rebuild_synchronizer() {
  std::vector<std::size_t> hosts;
  for (std::size_t w : members_) hosts.push_back(worker_hosts_[w]);
  // Parameter servers are not preempted (assumed: they run on on-demand machines).
  synchronizer_ = std::make_unique<Synchronizer>(sim_, network_, topology_, sync_options_,
                                                 std::move(hosts), server_hosts_);
  bucket_overhead_ = members_.size() > 1 ? sync_options_.bucket_overhead : Duration{};
}

bool TrainingRun::wait_for_return(const std::vector<bool>& present) {
  TimePoint next = kTimeInfinity;
  for (std::size_t w = 0; w < present.size(); ++w) {
    if (!present[w]) next = std::min(next, preemption_.current(w, sim_.now()).comeback);
  }
  if (next == kTimeInfinity) return false;
  stand_still(std::max(next - sim_.now(), Duration{1}));
  return true;
}

void TrainingRun::update_membership() {
  membership_changed_ = false;
  last_stall_ = Duration{};
  const PreemptionOptions& options = preemption_.options();
  if (!options.enabled()) return;
  const bool pause = options.mode == PreemptionMode::kPause;
  bool resumed = false;
  // Until the members stand still: every stall is time in which others may leave or return.
  // A run whose time budget ran out meanwhile ends (no step follows).
  while (!(training_.budget_time_s && to_seconds(sim_.now()) >= *training_.budget_time_s)) {
    const std::vector<bool> present = members_at(sim_.now());
    const auto count = std::count(present.begin(), present.end(), true);
    if (pause ? count < static_cast<std::ptrdiff_t>(present.size()) : count == 0) {
      if (!wait_for_return(present)) {
        present_.assign(present_.size(), false);
        members_.clear();
        return;
      }
      resumed = true;
      continue;
    }
    if (present == present_ && !resumed) return;
    resumed = false;
    stand_still(ceil_seconds(options.reconfiguration_s));
    if (present == present_) continue;
    present_ = present;
    members_.clear();
    for (std::size_t w = 0; w < present_.size(); ++w) {
      if (present_[w]) members_.push_back(w);
    }
    membership_changed_ = true;
    rebuild_synchronizer();
  }
}

void TrainingRun::plan_buckets(TimePoint start) {
  // Bucket j of K is ready on a worker once its backward pass has produced (j+1)/K of the
  // gradient; a collective starts when every worker has the bucket (the last one: the barrier).
  const std::size_t buckets = bucket_bytes_.size();
  for (std::size_t j = 0; j < buckets; ++j) {
    const double left = 1.0 - static_cast<double>(j + 1) / static_cast<double>(buckets);
    double ready_s = 0;
    for (const std::size_t w : members_) {
      const double backward_s = backward_fraction_ * record_.workers[w].compute_s;
      ready_s = std::max(ready_s, ready_s_[w] - left * backward_s);
    }
    bucket_ready_[j] = start + ceil_seconds(ready_s);
  }
}

void TrainingRun::start_bucket(std::size_t bucket) {
  synchronizer_->start(
      bucket_bytes_[bucket], [this, bucket](std::span<const WorkerSyncStats> stats) {
        for (std::size_t m = 0; m < stats.size(); ++m) {
          const std::size_t w = members_[m];
          WorkerSyncStats& total = sync_stats_[w];
          // The hook sees DDP's bucket work as communication.
          total.duration += stats[m].duration + bucket_overhead_;
          total.bytes_sent += stats[m].bytes_sent;
          total.bytes_received += stats[m].bytes_received;
          total.retransmitted_segments += stats[m].retransmitted_segments;
          total.timeouts += stats[m].timeouts;
        }
        if (bucket + 1 == bucket_bytes_.size()) {
          finish_step();
          return;
        }
        sim_.schedule_at(std::max(sim_.now(), bucket_ready_[bucket + 1]) + bucket_overhead_,
                         [this, bucket] { start_bucket(bucket + 1); });
      });
}

void TrainingRun::finish_step() {
  if (training_.step_overhead == Duration::zero()) {
    sim_.stop();
    return;
  }
  // The worker package times everything from the last bucket's hook to the iteration's end,
  // less the wait for the slowest worker, as communication: so does the record.
  for (const std::size_t w : members_) sync_stats_[w].duration += training_.step_overhead;
  sim_.schedule_at(sim_.now() + training_.step_overhead, [this] { sim_.stop(); });
}

bool TrainingRun::budget_exhausted() const {
  if (max_iterations_ && iteration_ >= *max_iterations_) return true;
  if (training_.budget_epochs && dynamics_.epochs() >= *training_.budget_epochs) return true;
  if (training_.budget_time_s && to_seconds(sim_.now()) >= *training_.budget_time_s) return true;
  return members_.empty();
}

StragglerTimeline TrainingRun::straggler_timeline() const {
  constexpr double kHorizonWithoutBudgetS = 1e6;
  const double horizon_s = training_.budget_time_s.value_or(kHorizonWithoutBudgetS);
  return StragglerTimeline(variability_.options(), nodes_.size(), seed_,
                           kTimeZero + ceil_seconds(horizon_s));
}

const IterationRecord& TrainingRun::step(std::span<const int> batches) {
  const std::size_t p = nodes_.size();
  DYNAMIX_CHECK(batches.size() == p,
                "got " << batches.size() << " batches for " << p << " workers");
  DYNAMIX_CHECK(!members_.empty(), "step with no worker left");
  const TimePoint start = sim_.now();
  double slowest_s = 0;
  for (std::size_t w = 0; w < p; ++w) {
    if (!present_[w]) record_.workers[w] = WorkerIteration{.present = false};
  }
  for (const std::size_t w : members_) {
    const int batch = batches[w];
    DYNAMIX_CHECK(batch >= 1 && batch <= max_batches_[w], "worker " << w << " batch " << batch
                                                                    << " outside [1, "
                                                                    << max_batches_[w] << "]");
    WorkerIteration& row = record_.workers[w];
    row.present = true;
    row.batch_size = batch;
    row.load_s = load_seconds(nodes_[w], cost_, batch);
    row.compute_s =
        compute_seconds(nodes_[w], cost_, batch) * variability_.compute_factor(w, start);
    row.straggling = variability_.in_straggler_episode(w, start);
    row.memory_util = memory_utilization(nodes_[w], cost_, batch);
    // The data loader prefetches on CPU cores while the GPU computes (PyTorch DataLoader).
    ready_s_[w] = std::max(row.load_s, row.compute_s);
    slowest_s = std::max(slowest_s, ready_s_[w]);
  }
  const TimePoint barrier = start + ceil_seconds(slowest_s);
  plan_buckets(start);
  std::fill(sync_stats_.begin(), sync_stats_.end(), WorkerSyncStats{});
  sim_.schedule_at(bucket_ready_.front() + bucket_overhead_, [this] { start_bucket(0); });
  sim_.run();
  const TimePoint end = sim_.now();
  const double iteration_s = to_seconds(end - start);

  record_.iteration = iteration_++;
  record_.start = start;
  record_.end = end;
  record_.training = train(batches);
  record_.validation_accuracy.reset();
  if (record_.training.validation_due) {
    validation_accuracy_ = dynamics_.validate();
    record_.validation_accuracy = validation_accuracy_;
    if (!time_to_target_ && *validation_accuracy_ >= training_.target_accuracy)
      time_to_target_ = end;
  }
  fill_sync_rows(to_seconds(barrier - start), iteration_s);
  last_iteration_ = end - start;
  update_membership();
  return record_;
}

void TrainingRun::fill_sync_rows(double barrier_s, double iteration_s) {
  for (const std::size_t w : members_) {
    WorkerIteration& row = record_.workers[w];
    const WorkerSyncStats& sync = sync_stats_[w];
    row.wait_s = barrier_s - ready_s_[w];
    row.comm_s = to_seconds(sync.duration);
    row.bytes_sent = sync.bytes_sent;
    row.bytes_received = sync.bytes_received;
    row.retransmits = sync.retransmitted_segments;
    row.timeouts = sync.timeouts;
    row.throughput_gbps = row.comm_s > 0 ? sync.bytes_sent * 8e-9 / row.comm_s : 0;
    row.cpu_time_ratio = iteration_s > 0 ? row.load_s / iteration_s : 0;
    row.grad_std_norm = grad_std_[w];
    row.grad_var_norm = grad_var_[w];
  }
}

IterationStats TrainingRun::train(std::span<const int> batches) {
  if (members_.size() == nodes_.size()) return dynamics_.step(batches, grad_std_, grad_var_);
  const std::size_t m = members_.size();
  member_batches_.resize(m);
  member_std_.resize(m);
  member_var_.resize(m);
  for (std::size_t i = 0; i < m; ++i) member_batches_[i] = batches[members_[i]];
  const IterationStats stats = dynamics_.step(member_batches_, member_std_, member_var_);
  for (std::size_t i = 0; i < m; ++i) {
    grad_std_[members_[i]] = member_std_[i];
    grad_var_[members_[i]] = member_var_[i];
  }
  return stats;
}

namespace {

/// Simulated seconds of up to `iterations` iterations at `batches`, and how many ran.
std::pair<double, std::int64_t> time_of(const Scenario& scenario, std::span<const int> batches,
                                        std::int64_t iterations) {
  TrainingRun run(scenario, scenario.seed);
  while (run.iterations() < iterations && !run.budget_exhausted()) run.step(batches);
  return {to_seconds(run.now()), run.iterations()};
}

}  // namespace

double loss_slowdown(const Scenario& scenario, std::span<const int> batches,
                     std::int64_t iterations) {
  const std::vector<LinkSpec>& links = scenario.topology.links();
  if (std::none_of(links.begin(), links.end(),
                   [](const LinkSpec& link) { return link.loss_rate > 0; })) {
    return 1;
  }
  const auto [lossy_s, lossy_iterations] = time_of(scenario, batches, iterations);
  ScenarioSpec spec = scenario.spec();
  spec.topology = spec.topology.without_loss();
  const auto [lossless_s, lossless_iterations] =
      time_of(Scenario(std::move(spec)), batches, lossy_iterations);
  if (lossless_s <= 0 || lossless_iterations != lossy_iterations) return 1;
  return lossy_s / lossless_s;
}

}  // namespace dynamix
