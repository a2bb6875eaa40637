// A snapshot whose output layer ignores the observation.
#include "policies/export/policy_snapshot.h"

#include <algorithm>

#include "sim/core/check.h"

namespace dynamix {

PolicySnapshot constant_action_snapshot(PolicySnapshot snapshot, std::size_t action) {
  DYNAMIX_CHECK(!snapshot.layers.empty(), "a snapshot without layers");
  DenseLayer& output = snapshot.layers.back();
  DYNAMIX_CHECK(action < output.outputs, "action " << action << " of " << output.outputs);
  std::fill(output.weight.begin(), output.weight.end(), 0.f);
  output.bias.assign(output.outputs, -kConstantActionMargin);
  output.bias[action] = 0;
  return snapshot;
}

}  // namespace dynamix
