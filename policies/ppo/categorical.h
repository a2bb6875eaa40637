// The categorical distribution over action logits (LibTorch 1.13 has no distributions module).
// Internal to policies/: includes LibTorch.
#pragma once

#include <torch/types.h>

namespace dynamix::categorical {

/// log π(a|s) for every action, rows of logits [rows × actions].
inline torch::Tensor log_probs(const torch::Tensor& logits) {
  return torch::log_softmax(logits, 1);
}

/// log π(a_i|s_i) of the chosen actions (int64 [rows]).
inline torch::Tensor log_prob(const torch::Tensor& logits, const torch::Tensor& actions) {
  return log_probs(logits).gather(1, actions.unsqueeze(1)).squeeze(1);
}

/// H(π(·|s_i)) = −Σ_a π log π, per row.
inline torch::Tensor entropy(const torch::Tensor& logits) {
  const torch::Tensor log_p = log_probs(logits);
  return -(log_p.exp() * log_p).sum(1);
}

}  // namespace dynamix::categorical
