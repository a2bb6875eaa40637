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
#include "adapter/server/report.h"
#include "gym/env_knobs.h"
#include "gym/observation.h"
#include "gym/window_metrics.h"
#include "policies/export/sha256.h"
#include "policies/export/torchscript_policy.h"
#include "policies/policy.h"
#include "policies/ppo/greedy_decision.h"
#include "sim/training/workload.h"

namespace dynamix {

/// A policy output the arbitrator refuses to act on (logits that are not finite).
class PolicyOutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ArbitratorOptions {
  /// Workers of the job; every report must have as many.
  std::size_t workers = 1;
  GuardRails guard_rails{};
  /// The policy file's SHA-256 (hex); when set, any other file is refused before it is loaded.
  std::string policy_sha256{};
  /// The SHA-256 (hex) of a policy file whose own TorchScript code may run (PolicyCode::kTrusted);
  /// any other file is refused, and without it only dynamix's code runs.
  std::string trust_policy_code{};
};

class Arbitrator {
 public:
  /// Loads policy.pt; PolicyFileError unless its SHA-256 is the pinned one (checked on the bytes
  /// that are then loaded) and its observation schema and action set are the ones this build's
  /// environment uses.
  Arbitrator(const std::filesystem::path& policy, const ArbitratorOptions& options);
  /// Serves a policy that chooses batches itself (a baseline: goodput:100, static:64, ...),
  /// named `spec` in the log; it sees each report as a DecisionContext under `env_options`'
  /// batch bounds and a served job's timing (served_options), with the workers' notices
  /// (leaving_in_s). InputError if a policy is pinned (only policy.pt files have a SHA-256).
  Arbitrator(std::unique_ptr<Policy> rule, const std::string& spec,
             const ArbitratorOptions& options,
             const EnvOptions& env_options = evaluation_env_options());

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
  Arbitrator(const std::string& bytes, const std::filesystem::path& policy,
             const ArbitratorOptions& options);

  /// The batches the policy asks for, into trace.greedy (logits only for a policy.pt).
  void ask_policy(const wire::WindowReport& report, std::span<const int> reported,
                  std::span<const int> caps, Trace& trace) const;

  wire::PolicyIdentity identity_;
  std::optional<TorchScriptPolicy> policy_;
  /// A rule-base policy.pt's rules, fed every report (started over with each episode).
  std::unique_ptr<RuleBook> rule_book_;
  std::unique_ptr<Policy> rule_;
  EnvOptions env_options_;
  ObservationBuilder builder_;
  ArbitratorOptions options_;
  mutable bool begun_ = false;
};

}  // namespace dynamix
