// What the arbitrator does with a report apart from asking a policy: the checks that make it
// trusted, its conversion to the environment's window, and the bounds every decision is held to.
// Free of LibTorch, so the sanitizer build fuzzes it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "adapter/proto/dynamix.pb.h"
#include "adapter/server/guard_rails.h"
#include "gym/batch_size_env.h"
#include "gym/window_metrics.h"
#include "sim/training/workload.h"

namespace dynamix {

namespace wire = ::dynamix::adapter::v1;

/// A report the arbitrator refuses; what() says which field and why, for the gRPC status.
class ReportError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Largest window index, iteration and iterations per window a report may carry: 2^53, exact in
/// a double, far beyond any job, and a sum of two that cannot overflow.
inline constexpr std::int64_t kMaxReportCount = std::int64_t{1} << 53;
/// Longest job id and GPU type a report may carry, characters.
inline constexpr std::size_t kMaxReportText = 256;
/// Largest report, bytes, for `workers` workers (gRPC refuses longer messages).
std::size_t max_report_bytes(std::size_t workers);

/// Longest preemption notice a worker may report, seconds: a day, the range of a scenario's
/// preemption.notice_s. Cloud notices are 30 s to 2 minutes; a day leaves room for maintenance a
/// scheduler announces hours ahead and keeps every horizon a policy forms finite.
inline constexpr double kMaxNoticeSeconds = 86400;

/// ReportError unless `report` is version 1, names a job, has `workers` workers, and every metric
/// lies in its range (kMetricRanges: finite; shares and accuracies in [0, 1], times, rates and
/// norms below physical bounds) with batches in [1, kMaxPolicyBatch] and notices (leaving_in_s)
/// in [0, kMaxNoticeSeconds].
void check_report(const wire::WindowReport& report, std::size_t workers);
/// The report's metrics in the environment's own type.
WindowMetrics to_window_metrics(const wire::WindowMetrics& metrics);
/// The inverse: a simulated window as a real worker would report it.
wire::WindowMetrics to_wire_metrics(const WindowMetrics& window);
/// Per worker, seconds until it leaves from the notice it reported, infinity for a worker that
/// reported none; empty when none did (DecisionContext::leaving_in_s).
std::vector<double> leaving_in_s(const wire::WindowMetrics& metrics);
/// `options` with a served job's timing, under which a rule decides on `report`: a decision
/// every report (decision_interval = metrics.iterations) that applies one window later
/// (decision_lag 1, apply_at_iteration).
EnvOptions served_options(const EnvOptions& options, const wire::WindowReport& report);
/// The batch each worker ran in the window (its batch_size, rounded).
std::vector<int> reported_batches(const wire::WindowMetrics& metrics);
/// Share of a worker's memory a decision may fill.
inline constexpr double kMemoryHeadroom = 0.9;
/// The largest batch a worker that peaked at `memory_util` of its memory running `batch` can
/// be given without passing kMemoryHeadroom: batch·kMemoryHeadroom/memory_util, at least 1.
/// Memory grows with the batch at most in proportion (fixed weights and optimizer state plus
/// activations per sample), so the bound is safe; none (INT_MAX) for an unmeasured 0.
int memory_cap(int batch, double memory_util);

/// Multiplier of the base LR (tuned at `reference_batch`) for `global_batch` under `rule`:
/// 1, S, √S or the AdaScale gain S·(φ+M0)/(φ+B) (sim/training/dynamics.h), S = B/M0, with the
/// noise scale φ = mean over workers of σ²_norm·b_i from the window (B_simple, McCandlish et al.).
double lr_factor(LrRule rule, double global_batch, double reference_batch,
                 const WindowMetrics& window);
/// The LrRule of a wire rule; ReportError for an unspecified one.
LrRule to_lr_rule(wire::LrRule rule);

/// InputError naming the option unless every bound is finite and >= 1.
void check_guard_rails(const GuardRails& rails);
GuardRails from_wire(const wire::GuardRails& rails);
wire::GuardRails to_wire(const GuardRails& rails);
/// `factor` within [previous / change, previous * change] and (0, rails.max_lr_factor].
double bound_lr_factor(double factor, double previous, const GuardRails& rails);

/// Each worker's largest batch: `max_batch`, what it declared (report.max_batches) and what its
/// measured memory holds (memory_cap).
std::vector<int> batch_caps(const wire::WindowReport& report, int max_batch);
/// The decision on a checked `report` from the batches a policy asked for: each within
/// [min_batch, caps[w]] (caps win), the global batch's and the LR factor's change held to
/// `rails`, applied one window later (report.iteration + metrics.iterations); the policy
/// identity is left to the caller. ReportError when the LR factor is not finite.
void bounded_decision(const wire::WindowReport& report, const WindowMetrics& window,
                      std::vector<int> batches, std::span<const int> caps, int min_batch,
                      const GuardRails& rails, wire::Decision& decision);

/// A report out of its job's sequence; what() starts with kOutOfSequence.
class SequenceError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
  /// A window decided already (ALREADY_EXISTS), rather than another job or an earlier window
  /// (FAILED_PRECONDITION).
  bool duplicate = false;
};
inline constexpr std::string_view kOutOfSequence = "out of sequence: ";

/// One job per arbitrator, its windows in order. The job named at the start, or else the first
/// one decided for, binds the arbitrator: another job's reports would change the first job's
/// decisions through a stateful rule's memory. Windows must come after the last one decided, so
/// a replayed or repeated report changes nothing.
class JobSequence {
 public:
  /// `job_id` empty: the first job decided for.
  explicit JobSequence(const std::string& job_id = "") : named_(job_id), job_(job_id) {}
  /// SequenceError unless `report` is of the bound job (any while none is) and its
  /// window_index is after the last decided.
  void check(const wire::WindowReport& report) const;
  /// `report` (checked) was decided: its job is bound, its window the last.
  void decided(const wire::WindowReport& report);
  /// A new arbitrator's sequence (replay, at a logged episode start): bound to the job named
  /// at the start, if any, with no window decided.
  void restart() { *this = JobSequence(named_); }

 private:
  std::string named_;
  std::string job_;
  std::int64_t last_window_ = -1;
  bool decided_any_ = false;
};

}  // namespace dynamix
