// One interface for every batch-size policy: hand-made baselines and learned PPO alike.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"

namespace dynamix {

/// What a policy is, for reports: the best static batch and the best heuristic are chosen among
/// their kinds; the oracle is the upper bound learned policies are measured against.
enum class PolicyKind { kStatic, kHeuristic, kLearned, kSchedule, kOracle, kOther };

/// "static", "heuristic", "learned", "schedule", "oracle", "other".
const char* policy_kind_name(PolicyKind kind);

/// Chooses every worker's next batch at each decision point of a BatchSizeEnv.
class Policy {
 public:
  virtual ~Policy() = default;
  /// The name evaluation reports use ("static:128", "goodput", "ppo").
  virtual std::string name() const = 0;
  virtual PolicyKind kind() const = 0;
  /// The batch every worker starts the episode at; 0 leaves the environment's starting batch.
  /// A static policy whose batch memory cannot hold is infeasible.
  virtual int initial_batch() const { return 0; }
  /// Iterations between decisions the policy was made for; 0 for any.
  virtual int decision_interval() const { return 0; }
  /// The action indices of the last decide(), when the policy picks from the environment's
  /// action set (learned policies); empty for policies that choose batches directly.
  virtual std::span<const int> last_actions() const { return {}; }
  /// The index among last_actions() that leaves things as they are, when the policy has its own
  /// action set (a learned policy: its file's); nullopt to count against the environment's.
  virtual std::optional<int> neutral_action() const { return std::nullopt; }
  /// The rule that decided the last decide(), for a policy that picks among the hand-made rules
  /// (a learned policy on the rule base); nullopt for any other.
  virtual std::optional<std::string> last_rule() const { return std::nullopt; }
  /// Called at the start of an episode (after env.reset(), or at a served job's first report);
  /// policies with per-episode state clear it here.
  virtual void begin_episode(const DecisionContext& context) { (void)context; }
  /// Called before a decision whose workers differ from the previous one's (workers preempted
  /// or back in an elastic run); by default the policy starts over on the new cluster.
  virtual void membership_changed(const DecisionContext& context) { begin_episode(context); }
  /// The batch each worker should run next, from the current observation and raw window
  /// (context.window); the caller clamps to bounds and memory.
  virtual std::vector<int> decide(const DecisionContext& context,
                                  const Observation& observation) = 0;
};

}  // namespace dynamix
