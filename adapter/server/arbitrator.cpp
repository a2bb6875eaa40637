// The arbitrator: a report checked, a policy asked, the decision bounded and logged.
#include "adapter/server/arbitrator.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iomanip>
#include <span>
#include <sstream>

#include "gym/batch_size_env.h"
#include "policies/export/policy_metadata.h"
#include "policies/export/sha256.h"
#include "sim/core/check.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

/// The file's identity; PolicyFileError unless its SHA-256 is each one the options pin.
wire::PolicyIdentity pinned_identity(const std::string& bytes, const std::filesystem::path& file,
                                     const ArbitratorOptions& options) {
  wire::PolicyIdentity identity;
  identity.set_sha256(sha256_of(bytes));
  for (const auto& [pin, option] : {std::pair{options.policy_sha256, "--policy-sha256"},
                                    std::pair{options.trust_policy_code, "--trust-policy-code"}}) {
    if (!pin.empty()) {
      require_pinned(identity.sha256(), checked_sha256(pin, option), option, file.string());
    }
  }
  return identity;
}

}  // namespace
Arbitrator::Arbitrator(const std::filesystem::path& policy, const ArbitratorOptions& options)
    : Arbitrator(read_policy_archive(policy), policy, options) {}

Arbitrator::Arbitrator(const std::string& bytes, const std::filesystem::path& policy,
                       const ArbitratorOptions& options)
    : identity_(pinned_identity(bytes, policy, options)),
      policy_(std::in_place, bytes, policy,
              options.trust_policy_code.empty() ? PolicyCode::kDynamix : PolicyCode::kTrusted),
      rule_book_(rule_book_for(policy_->metadata())),
      options_(options) {
  check_guard_rails(options_.guard_rails);
  // A policy decides with its own action set (a trained --actions), so only its inputs must match.
  require_compatible(policy_->metadata(), builder_.schema().to_json(), policy_->metadata().actions,
                     policy.string());
  // A rule-base policy's rules read the policy's own bounds and action set.
  env_options_.min_batch = policy_->metadata().min_batch;
  env_options_.max_batch = policy_->metadata().max_batch;
  env_options_.action_base = policy_->metadata().action_base;
  env_options_.actions = policy_->metadata().actions;
  identity_.set_format_version(policy_->metadata().version);
  identity_.set_action_base(std::string(action_base_name(policy_->metadata().action_base)));
}

Arbitrator::Arbitrator(std::unique_ptr<Policy> rule, const std::string& spec,
                       const ArbitratorOptions& options, const EnvOptions& env_options)
    : rule_(std::move(rule)), env_options_(env_options), options_(options) {
  check_guard_rails(options_.guard_rails);
  // As BatchSizeEnv does: a rule that grows by the action set's steps (gns) needs one.
  if (env_options_.actions.empty())
    env_options_.actions = default_actions(env_options_.action_base);
  for (const auto& [pin, option] : {std::pair{options_.policy_sha256, "--policy-sha256"},
                                    std::pair{options_.trust_policy_code, "--trust-policy-code"}}) {
    if (!pin.empty()) {
      throw InputError(option, 0, "", "a policy.pt file to pin",
                       "the policy '" + spec + "', which is dynamix's own code");
    }
  }
  identity_.set_spec(spec);
}

std::size_t Arbitrator::actions() const { return policy_ ? policy_->metadata().actions.size() : 0; }

wire::WindowReport Arbitrator::sample_report(std::size_t workers) {
  WindowMetrics window{.iterations = 10,
                       .time_s = 10,
                       .iteration_s = 0.1,
                       .train_loss = 1,
                       .train_accuracy = 0.5,
                       .validation_accuracy = 0.5,
                       .progress = 0.1,
                       .epochs = 0.1,
                       .workers = {}};
  window.workers.assign(workers, {.gpu_type = "warm-up",
                                  .batch_size = 64,
                                  .compute_s = 0.08,
                                  .comm_s = 0.01,
                                  .wait_s = 0.01,
                                  .throughput_gbps = 1,
                                  .cpu_time_ratio = 0.1,
                                  .memory_util = 0.5,
                                  .samples_per_s = 800,
                                  .grad_std_norm = 1,
                                  .grad_var_norm = 1});
  wire::WindowReport report;
  report.set_protocol_version(wire::PROTOCOL_VERSION_1);
  report.set_job_id("warm-up");
  report.set_iteration(window.iterations);
  *report.mutable_metrics() = to_wire_metrics(window);
  report.set_lr_rule(wire::LR_RULE_LINEAR);
  report.set_reference_batch(64.0 * static_cast<double>(workers));
  return report;
}

void Arbitrator::decide(const wire::WindowReport& report, wire::LogRecord& record) const {
  Trace trace;
  decide(report, record, trace);
}

void Arbitrator::ask_policy(const wire::WindowReport& report, std::span<const int> reported,
                            std::span<const int> caps, Trace& trace) const {
  const EnvOptions options = served_options(env_options_, report);
  const std::vector<double> leaving = leaving_in_s(report.metrics());
  const DecisionContext context{.options = options,
                                .window = trace.window,
                                .batches = reported,
                                .max_batches = caps,
                                .reference_batch = report.reference_batch(),
                                .epochs = report.metrics().epochs(),
                                .leaving_in_s = leaving};
  if (policy_) {
    if (!begun_ && rule_book_) rule_book_->begin_episode(context);
    decide_greedy(*policy_, context, trace.observation, policy_->metadata().min_batch, trace.greedy,
                  rule_book_.get());
    return;
  }
  if (!begun_) rule_->begin_episode(context);
  trace.greedy.batches = rule_->decide(context, trace.observation);
  trace.greedy.logits.clear();
  trace.greedy.actions.clear();
  DYNAMIX_CHECK(trace.greedy.batches.size() == reported.size(),
                rule_->name() << " gave " << trace.greedy.batches.size() << " batches for "
                              << reported.size() << " workers");
}

void Arbitrator::decide(const wire::WindowReport& report, wire::LogRecord& record, Trace& trace,
                        const GuardRails* given_rails) const {
  check_report(report, options_.workers);
  trace.window = to_window_metrics(report.metrics());
  builder_.build(trace.window, trace.observation);
  const int min_batch = policy_ ? policy_->metadata().min_batch : env_options_.min_batch;
  const int max_batch = policy_ ? policy_->metadata().max_batch : env_options_.max_batch;
  const std::vector<int> caps = batch_caps(report, max_batch);
  ask_policy(report, reported_batches(report.metrics()), caps, trace);
  if (!std::all_of(trace.greedy.logits.begin(), trace.greedy.logits.end(),
                   [](float logit) { return std::isfinite(logit); })) {
    throw PolicyOutputError("the policy's logits are not all finite");
  }
  const GuardRails& rails = given_rails ? *given_rails : options_.guard_rails;
  wire::Decision& decision = *record.mutable_decision();
  bounded_decision(report, trace.window, trace.greedy.batches, caps, min_batch, rails, decision);
  trace.greedy.batches.assign(decision.batches().begin(), decision.batches().end());
  *decision.mutable_policy() = identity_;
  *record.mutable_report() = report;
  record.clear_refusal();
  record.clear_episode_start();
  if (!begun_) record.set_episode_start(true);
  begun_ = true;
  record.mutable_logits()->Assign(trace.greedy.logits.begin(), trace.greedy.logits.end());
  *record.mutable_guard_rails() = to_wire(rails);
}

}  // namespace dynamix
