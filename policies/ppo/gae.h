// Generalized advantage estimation over transitions linked into per-(environment, worker) streams.
#pragma once

#include <cstdint>
#include <span>

namespace dynamix {

/// One transition of a stream: what it earned, what the critic thought, and what follows it.
/// `next` is the index of the following transition of the same episode and worker (always
/// greater than this one's), or -1 when the stream stops here: then `bootstrap` is V(s') —
/// the value of the final observation after truncation or at the rollout's end, 0 after
/// termination.
struct GaeInputs {
  std::span<const float> rewards;
  std::span<const float> values;
  std::span<const std::int64_t> next;
  std::span<const float> bootstrap;
  /// Per transition, the exponent of γ for its step (semi-MDP: the step's duration in the
  /// discount's time unit); empty means 1 for every step.
  std::span<const float> discount_exponents = {};
};

/// Advantages A_t = δ_t + γ_t λ A_{t+1}, δ_t = r_t + γ_t V(s_{t+1}) − V(s_t) (Schulman et al.
/// 2016), with γ_t = γ^(discount_exponents[t]) (γ when none are given), and returns A_t + V(s_t).
void compute_gae(const GaeInputs& inputs, double gamma, double lambda, std::span<float> advantages,
                 std::span<float> returns);

}  // namespace dynamix
