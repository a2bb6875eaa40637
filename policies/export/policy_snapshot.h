// A trained actor as plain numbers, between the trainer and the TorchScript export.
#pragma once

#include <cstddef>
#include <vector>

#include "policies/export/policy_metadata.h"

namespace dynamix {

/// A tanh-MLP layer as plain numbers: weight row-major [outputs × inputs].
struct DenseLayer {
  std::size_t inputs = 0;
  std::size_t outputs = 0;
  std::vector<float> weight;
  std::vector<float> bias;
};

/// Everything an exported policy holds: clamp((obs − mean) / std, ±clip), then the layers
/// (tanh between them, none after the last).
struct PolicySnapshot {
  PolicyMetadata metadata;
  std::vector<float> observation_mean;
  std::vector<float> observation_std;
  float observation_clip = 10;
  std::vector<DenseLayer> layers;
};

/// How far below the kept action's logit a constant_action_snapshot puts every other action's:
/// softmax leaves them about 2e-22, still a normal float.
inline constexpr float kConstantActionMargin = 50;

/// `snapshot` with its last layer's weights zero and its bias 0 for `action` and
/// −kConstantActionMargin for every other action: the same network, normalization and metadata,
/// whose logits are the bias whatever the observation, so that it always takes `action`.
PolicySnapshot constant_action_snapshot(PolicySnapshot snapshot, std::size_t action);

}  // namespace dynamix
