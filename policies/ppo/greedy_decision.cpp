// Greedy decisions of a TorchScript policy over a raw window.
#include "policies/ppo/greedy_decision.h"

#include <algorithm>
#include <limits>

#include "gym/action_base.h"
#include "sim/core/check.h"

namespace dynamix {

void decide_greedy(const TorchScriptPolicy& policy, const DecisionContext& context,
                   const Observation& observation, int min_batch, GreedyDecision& out,
                   RuleBook* rules) {
  const PolicyMetadata& metadata = policy.metadata();
  out.logits = policy.logits(observation);
  out.actions = greedy_of(out.logits, metadata.actions.size());
  DYNAMIX_CHECK(context.batches.size() == out.actions.size(),
                context.batches.size() << " batches for " << out.actions.size() << " workers");
  if (metadata.action_base == ActionBase::kRule) {
    DYNAMIX_CHECK(rules != nullptr, "a rule-base policy decides through its RuleBook");
    rules->decide(context, out.actions, out.requested);
  } else {
    requested_batches(metadata.action_base, metadata.actions, context.window, context.batches,
                      out.actions, out.requested);
  }
  out.batches.resize(out.requested.size());
  for (std::size_t i = 0; i < out.requested.size(); ++i) {
    out.batches[i] = static_cast<int>(
        std::clamp<long long>(out.requested[i], min_batch, std::numeric_limits<int>::max()));
  }
}

}  // namespace dynamix

namespace dynamix {

std::unique_ptr<RuleBook> rule_book_for(const PolicyMetadata& metadata) {
  if (metadata.action_base != ActionBase::kRule) return nullptr;
  return std::make_unique<RuleBook>(metadata.actions);
}

}  // namespace dynamix
