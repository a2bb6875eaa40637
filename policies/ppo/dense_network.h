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
  /// The vector instructions the products and tanh run on. All give the same bits: each lane
  /// runs the same operations in the same order; the wider ones only sooner.
  enum class VectorUnit { kBaseline, kAvx2, kAvx512 };
  static bool supported(VectorUnit unit);
  /// The widest unit this CPU has.
  static VectorUnit widest_unit();

  DenseNetwork() = default;
  /// Copies `layers` (weight row-major [outputs × inputs], as DenseLayer holds it).
  explicit DenseNetwork(std::span<const DenseLayer> layers, VectorUnit unit = widest_unit());

  std::size_t inputs() const;
  std::size_t outputs() const;

  /// The last layer's outputs for each row of `rows` ([count × inputs], row-major), tanh between
  /// the layers and none after the last, into `out` ([count × outputs]). Each output sums its
  /// bias, then its inputs in order, so a row's result does not depend on the other rows.
  void forward(std::span<const float> rows, std::span<float> out);

  /// A forward pass's intermediate rows; one per thread that runs forward passes at once.
  struct Scratch {
    std::vector<float> layers[2];
  };
  /// As forward(rows, out), in `scratch`: safe on many threads at once, each with its own.
  void forward(std::span<const float> rows, std::span<float> out, Scratch& scratch) const;

 private:
  struct Layer {
    std::size_t inputs = 0;
    std::size_t outputs = 0;
    /// `outputs` rounded up to 16, so that every unit fills whole registers.
    std::size_t stride = 0;
    /// Transposed, [inputs × stride], zero beyond `outputs`: the inner loop runs over outputs in
    /// registers without reordering any sum.
    std::vector<float> weight_by_input;
    std::vector<float> bias;
  };
  VectorUnit unit_ = VectorUnit::kBaseline;
  std::vector<Layer> layers_;
  Scratch scratch_;
};

}  // namespace dynamix
