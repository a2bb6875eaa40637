// Generalized advantage estimation.
#include "policies/ppo/gae.h"

#include <cmath>

#include "sim/core/check.h"

namespace dynamix {

void compute_gae(const GaeInputs& inputs, double gamma, double lambda, std::span<float> advantages,
                 std::span<float> returns) {
  const std::size_t n = inputs.rewards.size();
  DYNAMIX_CHECK(inputs.values.size() == n && inputs.next.size() == n &&
                    inputs.bootstrap.size() == n && advantages.size() == n && returns.size() == n &&
                    (inputs.discount_exponents.empty() || inputs.discount_exponents.size() == n),
                "GAE inputs of different lengths");
  for (std::size_t i = n; i-- > 0;) {
    const std::int64_t next = inputs.next[i];
    DYNAMIX_CHECK(
        next < 0 || (static_cast<std::size_t>(next) > i && static_cast<std::size_t>(next) < n),
        "transition " << i << " links to " << next);
    const double discount =
        inputs.discount_exponents.empty()
            ? gamma
            : std::pow(gamma, static_cast<double>(inputs.discount_exponents[i]));
    const double next_value = next < 0 ? inputs.bootstrap[i] : inputs.values[next];
    const double delta = inputs.rewards[i] + discount * next_value - inputs.values[i];
    const double carried = next < 0 ? 0.0 : discount * lambda * advantages[next];
    advantages[i] = static_cast<float>(delta + carried);
    returns[i] = advantages[i] + inputs.values[i];
  }
}

}  // namespace dynamix
