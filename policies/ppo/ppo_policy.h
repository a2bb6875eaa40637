// The learned policy behind the common Policy interface: a TorchScript policy.pt, greedy.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "policies/export/torchscript_policy.h"
#include "policies/policy.h"
#include "policies/ppo/greedy_decision.h"

namespace dynamix {

class PpoPolicy : public Policy {
 public:
  /// Loads policy.pt and refuses it (PolicyFileError naming what differs) unless it was trained
  /// with this environment's observation schema and action set.
  PpoPolicy(const std::filesystem::path& file, const ObservationSchema& schema,
            const EnvOptions& options);
  /// The same from an archive already read, its code checked as `code` says.
  PpoPolicy(const std::string& archive, const std::filesystem::path& file, PolicyCode code,
            const ObservationSchema& schema, const EnvOptions& options);

  std::string name() const override { return "ppo"; }
  PolicyKind kind() const override { return PolicyKind::kLearned; }
  /// Each worker's base (the policy's action_base) plus the change of its most likely action
  /// (decide_greedy, the path the arbitrator and replay take too).
  std::vector<int> decide(const DecisionContext& context, const Observation& observation) override;
  /// A rule-base policy's rules start over.
  void begin_episode(const DecisionContext& context) override;
  int decision_interval() const override { return module_.metadata().decision_interval; }
  std::span<const int> last_actions() const override { return actions_; }
  /// Under the rule base, the rule the policy's choices agreed on last.
  std::optional<std::string> last_rule() const override;
  /// The neutral action of the file's own base and action set.
  std::optional<int> neutral_action() const override;
  const TorchScriptPolicy& module() const { return module_; }

 private:
  TorchScriptPolicy module_;
  std::vector<int> actions_;
  GreedyDecision decision_;
  std::unique_ptr<RuleBook> rules_;
};

}  // namespace dynamix
