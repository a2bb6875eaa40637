// DenseNetwork: row-by-row products in a fixed order and a tanh of our own, both in float.
#include "policies/ppo/dense_network.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "sim/core/check.h"

namespace dynamix {
namespace {

/// tanh in float from IEEE +, −, ×, ÷ alone, written so that a loop over it vectorizes:
/// tanh(a) = −m / (2 + m) with m = e^−2a − 1, which loses no digits near 0. m comes from fdlibm's
/// reduction −2a = n·ln 2 + r, |r| <= ln 2 / 2: m = 2^n·(e^r − 1) + (2^n − 1), with e^r − 1 a
/// degree-8 Taylor polynomial.
inline float tanh_of(float x) {
  constexpr float kLog2e = 1.44269504f;
  // ln 2 split so that n·kLn2High is exact for |n| < 2^8.
  constexpr float kLn2High = 0.693145751953125f;
  constexpr float kLn2Low = 1.42860677e-06f;
  // Adding and removing 1.5·2^23 rounds to the nearest integer in the default rounding mode.
  constexpr float kRound = 12582912.0f;
  constexpr std::uint32_t kSign = 0x80000000u;
  const auto bits = std::bit_cast<std::uint32_t>(x);
  const float magnitude = std::bit_cast<float>(bits & ~kSign);
  // tanh(9) rounds to 1 in float; NaN takes 9 too and is restored below.
  const float a = magnitude < 9.0f ? magnitude : 9.0f;
  const float y = -2 * a;
  const float n = (y * kLog2e + kRound) - kRound;
  const float r = (y - n * kLn2High) - n * kLn2Low;
  float q = 1.0f / 40320;
  q = q * r + 1.0f / 5040;
  q = q * r + 1.0f / 720;
  q = q * r + 1.0f / 120;
  q = q * r + 1.0f / 24;
  q = q * r + 1.0f / 6;
  q = q * r + 0.5f;
  q = q * r + 1.0f;
  q = q * r;
  const float scale = std::bit_cast<float>((static_cast<std::int32_t>(n) + 127) << 23);
  const float m = scale * q + (scale - 1);
  const float t = -m / (2 + m);
  const float signed_t =
      std::bit_cast<float>((std::bit_cast<std::uint32_t>(t) & ~kSign) | (bits & kSign));
  return x != x ? x : signed_t;
}

/// Outputs summed in blocks held in registers; each sums its bias, then its inputs in order.
constexpr std::size_t kBlock = 16;

}  // namespace

float portable_tanh(float x) { return tanh_of(x); }

DenseNetwork::DenseNetwork(std::span<const DenseLayer> layers) {
  for (const DenseLayer& layer : layers) {
    DYNAMIX_CHECK(
        layer.weight.size() == layer.inputs * layer.outputs && layer.bias.size() == layer.outputs,
        "a layer of " << layer.inputs << " inputs and " << layer.outputs << " outputs with "
                      << layer.weight.size() << " weights and " << layer.bias.size() << " biases");
    DYNAMIX_CHECK(layers_.empty() || layers_.back().outputs == layer.inputs,
                  "a layer of " << layer.inputs << " inputs after one of " << layers_.back().outputs
                                << " outputs");
    Layer copy{.inputs = layer.inputs,
               .outputs = layer.outputs,
               .weight_by_input = std::vector<float>(layer.weight.size()),
               .bias = layer.bias};
    for (std::size_t o = 0; o < layer.outputs; ++o) {
      for (std::size_t i = 0; i < layer.inputs; ++i) {
        copy.weight_by_input[i * layer.outputs + o] = layer.weight[o * layer.inputs + i];
      }
    }
    layers_.push_back(std::move(copy));
  }
}

void DenseNetwork::multiply_row(const Layer& layer, const float* x, float* out) {
  const std::size_t width = layer.outputs;
  const float* weight = layer.weight_by_input.data();
  std::size_t first = 0;
  for (; first + kBlock <= width; first += kBlock) {
    float sum[kBlock];
    for (std::size_t o = 0; o < kBlock; ++o) sum[o] = layer.bias[first + o];
    for (std::size_t i = 0; i < layer.inputs; ++i) {
      const float xi = x[i];
      const float* w = weight + i * width + first;
      for (std::size_t o = 0; o < kBlock; ++o) sum[o] += xi * w[o];
    }
    std::copy_n(sum, kBlock, out + first);
  }
  for (; first < width; ++first) {
    float sum = layer.bias[first];
    for (std::size_t i = 0; i < layer.inputs; ++i) sum += x[i] * weight[i * width + first];
    out[first] = sum;
  }
}

std::size_t DenseNetwork::inputs() const { return layers_.empty() ? 0 : layers_.front().inputs; }
std::size_t DenseNetwork::outputs() const { return layers_.empty() ? 0 : layers_.back().outputs; }

void DenseNetwork::forward(std::span<const float> rows, std::span<float> out) {
  DYNAMIX_CHECK(!layers_.empty(), "a forward pass through no layers");
  DYNAMIX_CHECK(rows.size() % inputs() == 0,
                rows.size() << " values are not rows of " << inputs() << " inputs");
  const std::size_t count = rows.size() / inputs();
  DYNAMIX_CHECK(out.size() == count * outputs(),
                out.size() << " outputs for " << count << " rows of " << outputs());
  const float* input = rows.data();
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    const bool last = l + 1 == layers_.size();
    std::vector<float>& scratch = scratch_[l % 2];
    if (!last && scratch.size() < count * layer.outputs) scratch.resize(count * layer.outputs);
    float* output = last ? out.data() : scratch.data();
    for (std::size_t r = 0; r < count; ++r) {
      multiply_row(layer, input + r * layer.inputs, output + r * layer.outputs);
    }
    if (!last) {
      for (std::size_t i = 0; i < count * layer.outputs; ++i) output[i] = tanh_of(output[i]);
    }
    input = output;
  }
}

}  // namespace dynamix
