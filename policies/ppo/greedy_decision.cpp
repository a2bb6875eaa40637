// Greedy decisions of a TorchScript policy over a raw window.
#include "policies/ppo/greedy_decision.h"

#include <algorithm>
#include <limits>

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
  requested_batches(metadata.action_base, metadata.actions, window, current, out.actions,
                    out.requested);
  out.batches.resize(out.requested.size());
  for (std::size_t i = 0; i < out.requested.size(); ++i) {
    out.batches[i] = static_cast<int>(
        std::clamp<long long>(out.requested[i], min_batch, std::numeric_limits<int>::max()));
  }
}

}  // namespace dynamix
