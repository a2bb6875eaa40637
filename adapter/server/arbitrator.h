// The arbitrator's decisions: real workers' window reports through the environment's
// ObservationBuilder and a policy.pt's greedy decision, with the LR factor of the new global batch.
#pragma once

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "adapter/proto/dynamix.pb.h"
#include "gym/observation.h"
#include "gym/window_metrics.h"
#include "policies/export/torchscript_policy.h"
#include "policies/ppo/greedy_decision.h"
#include "sim/training/workload.h"

namespace dynamix {

namespace wire = ::dynamix::adapter::v1;

/// A report the arbitrator refuses; what() says which field and why, for the gRPC status.
class ReportError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Longest job id and GPU type a report may carry, characters.
inline constexpr std::size_t kMaxReportText = 256;
/// Largest report, bytes, for `workers` workers (gRPC refuses longer messages).
std::size_t max_report_bytes(std::size_t workers);

/// ReportError unless `report` is version 1, names a job, has `workers` workers, and every metric
/// is finite and non-negative (train_accuracy_change may be negative) with batches >= 1.
void check_report(const wire::WindowReport& report, std::size_t workers);
/// The report's metrics in the environment's own type.
WindowMetrics to_window_metrics(const wire::WindowMetrics& metrics);
/// The inverse: a simulated window as a real worker would report it.
wire::WindowMetrics to_wire_metrics(const WindowMetrics& window);
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

/// SHA-256 of a file, lower-case hex; PolicyFileError if unreadable.
std::string sha256_of_file(const std::filesystem::path& file);

class Arbitrator {
 public:
  /// Loads policy.pt for `workers` workers; PolicyFileError unless its observation schema and
  /// action set are the ones this build's environment uses.
  Arbitrator(const std::filesystem::path& policy, std::size_t workers);

  /// Checks `report` (ReportError) and decides: the record gets the report, the decision and the
  /// logits. Thread-safe.
  void decide(const wire::WindowReport& report, wire::LogRecord& record) const;
  /// The same decision, its observation and logits kept (for traces and replay).
  struct Trace {
    WindowMetrics window;
    Observation observation;
    GreedyDecision greedy;
  };
  void decide(const wire::WindowReport& report, wire::LogRecord& record, Trace& trace) const;

  const wire::PolicyIdentity& identity() const { return identity_; }
  const TorchScriptPolicy& policy() const { return policy_; }
  std::size_t workers() const { return workers_; }

 private:
  TorchScriptPolicy policy_;
  ObservationBuilder builder_;
  wire::PolicyIdentity identity_;
  std::size_t workers_;
};

}  // namespace dynamix
