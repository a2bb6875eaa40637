// The arbitrator's decisions: real workers' window reports through the environment's
// ObservationBuilder and a policy.pt's greedy decision, with the LR factor of the new global batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "adapter/proto/dynamix.pb.h"
#include "gym/observation.h"
#include "gym/window_metrics.h"
#include "policies/export/torchscript_policy.h"
#include "policies/policy.h"
#include "policies/ppo/greedy_decision.h"
#include "sim/training/workload.h"

namespace dynamix {

namespace wire = ::dynamix::adapter::v1;

/// A report the arbitrator refuses; what() says which field and why, for the gRPC status.
class ReportError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A policy output the arbitrator refuses to act on (logits that are not finite).
class PolicyOutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Longest job id and GPU type a report may carry, characters.
inline constexpr std::size_t kMaxReportText = 256;
/// Largest report, bytes, for `workers` workers (gRPC refuses longer messages).
std::size_t max_report_bytes(std::size_t workers);

/// ReportError unless `report` is version 1, names a job, has `workers` workers, and every metric
/// lies in its range (kMetricRanges: finite; shares and accuracies in [0, 1], times, rates and
/// norms below physical bounds) with batches in [1, kMaxPolicyBatch].
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
/// SHA-256 of bytes, lower-case hex.
std::string sha256_of(std::string_view bytes);

/// The bounds every decision is held to, on the arbitrator and (with the same defaults) in the
/// worker: a policy, or whoever answers in its place, cannot swing a job.
struct GuardRails {
  /// Largest factor by which one decision may change the reported window's global batch.
  double max_batch_change = 2.0;
  /// Largest factor by which one decision may change the LR factor in force.
  double max_lr_change = 2.0;
  /// Largest LR factor a decision may give.
  double max_lr_factor = 64.0;
};
/// InputError naming the option unless every bound is finite and >= 1.
void check_guard_rails(const GuardRails& rails);
GuardRails from_wire(const wire::GuardRails& rails);
wire::GuardRails to_wire(const GuardRails& rails);
/// `batches` scaled so that their sum lies within [reported / change, reported * change], each
/// kept within [1, caps[w]] (caps win over the lower bound).
std::vector<int> bound_global_change(std::vector<int> batches, std::int64_t reported, double change,
                                     const std::vector<int>& caps);
/// `factor` within [previous / change, previous * change] and (0, rails.max_lr_factor].
double bound_lr_factor(double factor, double previous, const GuardRails& rails);

struct ArbitratorOptions {
  /// Workers of the job; every report must have as many.
  std::size_t workers = 1;
  GuardRails guard_rails{};
  /// The policy file's SHA-256 (hex); when set, any other file is refused before it is loaded.
  std::string policy_sha256{};
};

class Arbitrator {
 public:
  /// Loads policy.pt; PolicyFileError unless its SHA-256 is the pinned one (checked on the bytes
  /// that are then loaded) and its observation schema and action set are the ones this build's
  /// environment uses.
  Arbitrator(const std::filesystem::path& policy, const ArbitratorOptions& options);
  /// Serves a policy that chooses batches itself (a baseline: goodput:100, static:64, ...),
  /// named `spec` in the log; it sees each report as a DecisionContext under `env_options`'
  /// batch bounds. InputError if a policy is pinned (only policy.pt files have a SHA-256).
  Arbitrator(std::unique_ptr<Policy> rule, const std::string& spec,
             const ArbitratorOptions& options, const EnvOptions& env_options = {});

  /// Checks `report` (ReportError) and decides: the record gets the report, the decision and the
  /// logits. Thread-safe.
  void decide(const wire::WindowReport& report, wire::LogRecord& record) const;
  /// The same decision, its observation and logits kept (for traces and replay).
  struct Trace {
    WindowMetrics window;
    Observation observation;
    GreedyDecision greedy;
  };
  /// `rails` replaces the arbitrator's own guard rails when given (replay: the logged ones).
  void decide(const wire::WindowReport& report, wire::LogRecord& record, Trace& trace,
              const GuardRails* rails = nullptr) const;

  const wire::PolicyIdentity& identity() const { return identity_; }
  /// The policy.pt served; nullptr for a rule.
  const TorchScriptPolicy* policy() const { return policy_ ? &*policy_ : nullptr; }
  /// Actions per worker in the logits (0 for a rule, which has none).
  std::size_t actions() const;
  /// The next decision starts a new episode of a stateful rule (replay, at a logged
  /// episode_start).
  void begin_next_episode() const { begun_ = false; }
  std::size_t workers() const { return options_.workers; }
  const GuardRails& guard_rails() const { return options_.guard_rails; }
  /// A report of `workers` plausible windows, for a warm-up decision.
  static wire::WindowReport sample_report(std::size_t workers);

 private:
  Arbitrator(std::string bytes, const std::filesystem::path& policy,
             const ArbitratorOptions& options);

  /// The batches the policy asks for, into trace.greedy (logits only for a policy.pt).
  void ask_policy(const wire::WindowReport& report, std::span<const int> reported,
                  std::span<const int> caps, Trace& trace) const;

  wire::PolicyIdentity identity_;
  std::optional<TorchScriptPolicy> policy_;
  std::unique_ptr<Policy> rule_;
  EnvOptions env_options_;
  ObservationBuilder builder_;
  ArbitratorOptions options_;
  mutable bool begun_ = false;
};

}  // namespace dynamix
