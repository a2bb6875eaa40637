// A learned policy's greedy decision for one raw window, with the logits behind it: the one code
// path the environment's PpoPolicy, the arbitrator serving real workers and replay share.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "gym/observation.h"
#include "gym/rules.h"
#include "gym/window_metrics.h"
#include "policies/export/torchscript_policy.h"

namespace dynamix {

struct GreedyDecision {
  /// Row-major [workers × actions].
  std::vector<float> logits;
  /// Each worker's most likely action index.
  std::vector<int> actions;
  /// The batch each worker's action asks for under the policy's action_base, at least the
  /// minimum batch.
  std::vector<int> batches;
  /// Scratch: the same before the minimum (kept to reuse its storage).
  std::vector<long long> requested;
};

/// Decides for `observation` (ObservationBuilder's view of context.window), given the batches the
/// workers ran in that window (context.batches). A policy on the rule base decides through
/// `rules` (its own RuleBook, begun at the episode's start: rule_book_for), which must then be
/// given; the other bases need none.
void decide_greedy(const TorchScriptPolicy& policy, const DecisionContext& context,
                   const Observation& observation, int min_batch, GreedyDecision& out,
                   RuleBook* rules = nullptr);
/// The RuleBook a policy on the rule base decides through; nullptr for the other bases.
std::unique_ptr<RuleBook> rule_book_for(const PolicyMetadata& metadata);

}  // namespace dynamix
