// DenseNetwork: row-by-row products in a fixed order and a tanh of our own, both in float.
#include "policies/ppo/dense_network.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

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

/// Outputs are computed in multiples of this many (zero weights beyond a layer's own), so that
/// every unit fills whole registers.
constexpr std::size_t kPadding = 16;

/// One layer over `count` rows: [count × input_stride] in (the first `inputs` of each row read),
/// [count × stride] out, tanh after it when `activate`.
struct LayerPass {
  const float* weight = nullptr;  // [inputs × stride], by input
  const float* bias = nullptr;    // [stride]
  std::size_t inputs = 0;
  std::size_t stride = 0;
  const float* input = nullptr;
  std::size_t input_stride = 0;
  std::size_t count = 0;
  float* output = nullptr;
  bool activate = false;
};

/// `kLanes` floats in one vector register. (An alias template would drop the attribute: GCC 12
/// makes that a plain float.)
template <std::size_t kLanes>
struct VectorOf {
  typedef float type __attribute__((vector_size(kLanes * sizeof(float))));
};
template <std::size_t kLanes>
using Vector = typename VectorOf<kLanes>::type;
static_assert(sizeof(Vector<16>) == 16 * sizeof(float));

/// `v` += x · from[0 … kLanes) (references, not values: a vector argument of a width the
/// caller's target lacks would change the ABI).
template <std::size_t kLanes>
[[gnu::always_inline]] inline void add_product(Vector<kLanes>& v, float x, const float* from) {
  Vector<kLanes> w;
  std::memcpy(&w, from, sizeof w);
  v += x * w;
}

/// One row's 4 · `kLanes` outputs from `first` on, in four registers of sums: independent chains
/// of additions whose latencies overlap. Each sum adds its bias, then its inputs in order.
template <std::size_t kLanes>
[[gnu::always_inline]] inline void four_registers(const LayerPass& pass, const float* x, float* out,
                                                  std::size_t first) {
  const float* b = pass.bias + first;
  Vector<kLanes> s0, s1, s2, s3;
  std::memcpy(&s0, b, sizeof s0);
  std::memcpy(&s1, b + kLanes, sizeof s1);
  std::memcpy(&s2, b + 2 * kLanes, sizeof s2);
  std::memcpy(&s3, b + 3 * kLanes, sizeof s3);
  for (std::size_t i = 0; i < pass.inputs; ++i) {
    const float* w = pass.weight + i * pass.stride + first;
    const float xi = x[i];
    add_product<kLanes>(s0, xi, w);
    add_product<kLanes>(s1, xi, w + kLanes);
    add_product<kLanes>(s2, xi, w + 2 * kLanes);
    add_product<kLanes>(s3, xi, w + 3 * kLanes);
  }
  std::memcpy(out + first, &s0, sizeof s0);
  std::memcpy(out + first + kLanes, &s1, sizeof s1);
  std::memcpy(out + first + 2 * kLanes, &s2, sizeof s2);
  std::memcpy(out + first + 3 * kLanes, &s3, sizeof s3);
}

/// One row's `kLanes` outputs from `first` on, in one register of sums.
template <std::size_t kLanes>
[[gnu::always_inline]] inline void one_register(const LayerPass& pass, const float* x, float* out,
                                                std::size_t first) {
  Vector<kLanes> sum;
  std::memcpy(&sum, pass.bias + first, sizeof sum);
  for (std::size_t i = 0; i < pass.inputs; ++i) {
    add_product<kLanes>(sum, x[i], pass.weight + i * pass.stride + first);
  }
  std::memcpy(out + first, &sum, sizeof sum);
}

/// `pass.count` rows of one layer, tanh after it when `pass.activate`, on registers of `kLanes`
/// floats. Each lane of any vector width runs the same IEEE ×, + and ÷ in the same order (no
/// FMA: the project builds with -ffp-contract=off), so the versions below give the same bits.
template <std::size_t kLanes>
[[gnu::always_inline]] inline void layer_rows(const LayerPass& pass) {
  static_assert(kPadding % kLanes == 0);
  for (std::size_t r = 0; r < pass.count; ++r) {
    const float* x = pass.input + r * pass.input_stride;
    float* out = pass.output + r * pass.stride;
    std::size_t first = 0;
    for (; first + 4 * kLanes <= pass.stride; first += 4 * kLanes) {
      four_registers<kLanes>(pass, x, out, first);
    }
    for (; first < pass.stride; first += kLanes) one_register<kLanes>(pass, x, out, first);
    if (pass.activate) {
      for (std::size_t o = 0; o < pass.stride; ++o) out[o] = tanh_of(out[o]);
    }
  }
}

void layer_rows_baseline(const LayerPass& pass) { layer_rows<4>(pass); }
[[gnu::target("avx2")]] void layer_rows_avx2(const LayerPass& pass) { layer_rows<8>(pass); }
[[gnu::target("avx512f")]] void layer_rows_avx512(const LayerPass& pass) { layer_rows<16>(pass); }

}  // namespace

float portable_tanh(float x) { return tanh_of(x); }

bool DenseNetwork::supported(VectorUnit unit) {
  switch (unit) {
    case VectorUnit::kBaseline:
      return true;
    case VectorUnit::kAvx2:
      return __builtin_cpu_supports("avx2") != 0;
    case VectorUnit::kAvx512:
      return __builtin_cpu_supports("avx512f") != 0;
  }
  return false;
}

DenseNetwork::VectorUnit DenseNetwork::widest_unit() {
  for (const VectorUnit unit : {VectorUnit::kAvx512, VectorUnit::kAvx2}) {
    if (supported(unit)) return unit;
  }
  return VectorUnit::kBaseline;
}

DenseNetwork::DenseNetwork(std::span<const DenseLayer> layers, VectorUnit unit) : unit_(unit) {
  DYNAMIX_CHECK(supported(unit), "a forward pass on a vector unit this CPU lacks");
  for (const DenseLayer& layer : layers) {
    DYNAMIX_CHECK(
        layer.weight.size() == layer.inputs * layer.outputs && layer.bias.size() == layer.outputs,
        "a layer of " << layer.inputs << " inputs and " << layer.outputs << " outputs with "
                      << layer.weight.size() << " weights and " << layer.bias.size() << " biases");
    DYNAMIX_CHECK(layers_.empty() || layers_.back().outputs == layer.inputs,
                  "a layer of " << layer.inputs << " inputs after one of " << layers_.back().outputs
                                << " outputs");
    const std::size_t stride = (layer.outputs + kPadding - 1) / kPadding * kPadding;
    Layer copy{.inputs = layer.inputs,
               .outputs = layer.outputs,
               .stride = stride,
               .weight_by_input = std::vector<float>(layer.inputs * stride),
               .bias = std::vector<float>(stride)};
    std::copy(layer.bias.begin(), layer.bias.end(), copy.bias.begin());
    for (std::size_t o = 0; o < layer.outputs; ++o) {
      for (std::size_t i = 0; i < layer.inputs; ++i) {
        copy.weight_by_input[i * stride + o] = layer.weight[o * layer.inputs + i];
      }
    }
    layers_.push_back(std::move(copy));
  }
}

std::size_t DenseNetwork::inputs() const { return layers_.empty() ? 0 : layers_.front().inputs; }
std::size_t DenseNetwork::outputs() const { return layers_.empty() ? 0 : layers_.back().outputs; }

void DenseNetwork::forward(std::span<const float> rows, std::span<float> out) {
  forward(rows, out, scratch_);
}

void DenseNetwork::forward(std::span<const float> rows, std::span<float> out,
                           Scratch& scratch_rows) const {
  DYNAMIX_CHECK(!layers_.empty(), "a forward pass through no layers");
  DYNAMIX_CHECK(rows.size() % inputs() == 0,
                rows.size() << " values are not rows of " << inputs() << " inputs");
  const std::size_t count = rows.size() / inputs();
  DYNAMIX_CHECK(out.size() == count * outputs(),
                out.size() << " outputs for " << count << " rows of " << outputs());
  const float* input = rows.data();
  std::size_t input_stride = inputs();
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    std::vector<float>& scratch = scratch_rows.layers[l % 2];
    if (scratch.size() < count * layer.stride) scratch.resize(count * layer.stride);
    const LayerPass pass{.weight = layer.weight_by_input.data(),
                         .bias = layer.bias.data(),
                         .inputs = layer.inputs,
                         .stride = layer.stride,
                         .input = input,
                         .input_stride = input_stride,
                         .count = count,
                         .output = scratch.data(),
                         .activate = l + 1 < layers_.size()};
    switch (unit_) {
      case VectorUnit::kBaseline:
        layer_rows_baseline(pass);
        break;
      case VectorUnit::kAvx2:
        layer_rows_avx2(pass);
        break;
      case VectorUnit::kAvx512:
        layer_rows_avx512(pass);
        break;
    }
    input = scratch.data();
    input_stride = layer.stride;
  }
  const std::size_t width = outputs();
  for (std::size_t r = 0; r < count; ++r) {
    std::copy_n(input + r * input_stride, width,
                out.begin() + static_cast<std::ptrdiff_t>(r * width));
  }
}

}  // namespace dynamix
