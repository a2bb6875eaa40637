// A tanh MLP's forward pass without LibTorch, for the rollouts' many small batches: the same bits
// on every x86-64 CPU (IEEE +, −, ×, ÷ in a fixed order, no libm), and no allocation once warm.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "policies/export/policy_snapshot.h"

namespace dynamix {

/// tanh(x) rounded to float from a double-precision evaluation: within 1 ulp of the exact value,
/// odd, NaN for NaN, and the same bits on every x86-64 CPU whatever libm or vector unit it has.
float portable_tanh(float x);

class DenseNetwork {
 public:
  DenseNetwork() = default;
  /// Copies `layers` (weight row-major [outputs × inputs], as DenseLayer holds it).
  explicit DenseNetwork(std::span<const DenseLayer> layers);

  std::size_t inputs() const;
  std::size_t outputs() const;

  /// The last layer's outputs for each row of `rows` ([count × inputs], row-major), tanh between
  /// the layers and none after the last, into `out` ([count × outputs]). Each output sums its
  /// bias, then its inputs in order, so a row's result does not depend on the other rows.
  void forward(std::span<const float> rows, std::span<float> out);

 private:
  struct Layer {
    std::size_t inputs = 0;
    std::size_t outputs = 0;
    /// Transposed, [inputs × outputs]: the inner loop runs over outputs and vectorizes without
    /// reordering any sum.
    std::vector<float> weight_by_input;
    std::vector<float> bias;
  };
  /// One row's outputs of `layer` for the inputs `x`.
  static void multiply_row(const Layer& layer, const float* x, float* out);

  std::vector<Layer> layers_;
  std::vector<float> scratch_[2];
};

}  // namespace dynamix
