// Greedy decisions of a TorchScript policy over a raw window.
#include "policies/ppo/greedy_decision.h"

#include <algorithm>

#include "gym/action_base.h"
#include "sim/core/check.h"

namespace dynamix {

void decide_greedy(const TorchScriptPolicy& policy, const WindowMetrics& window,
                   std::span<const int> current, const Observation& observation, int min_batch,
                   GreedyDecision& out) {
  const PolicyMetadata& metadata = policy.metadata();
  out.logits = policy.logits(observation);
  out.actions = greedy_of(out.logits, metadata.actions.size());
  DYNAMIX_CHECK(current.size() == out.actions.size(),
                current.size() << " batches for " << out.actions.size() << " workers");
  action_bases(metadata.action_base, window, current, out.batches);
  for (std::size_t i = 0; i < out.actions.size(); ++i) {
    out.batches[i] = std::max(
        min_batch, out.batches[i] + metadata.actions[static_cast<std::size_t>(out.actions[i])]);
  }
}

}  // namespace dynamix
