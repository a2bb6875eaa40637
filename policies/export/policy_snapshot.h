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

}  // namespace dynamix
