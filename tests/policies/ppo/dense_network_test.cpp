// The rollouts' forward pass: its tanh against libm's, and its products against a plain sum.
#include "policies/ppo/dense_network.h"

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "sim/core/random.h"

namespace dynamix {
namespace {

/// Floats between a and b, counted in units in the last place (same sign assumed).
std::int64_t ulps_apart(float a, float b) {
  return std::abs(static_cast<std::int64_t>(std::bit_cast<std::int32_t>(a)) -
                  static_cast<std::int64_t>(std::bit_cast<std::int32_t>(b)));
}

DenseLayer random_layer(std::size_t inputs, std::size_t outputs, Rng& rng) {
  DenseLayer layer;
  layer.inputs = inputs;
  layer.outputs = outputs;
  for (std::size_t i = 0; i < inputs * outputs; ++i)
    layer.weight.push_back(static_cast<float>(rng.normal() / std::sqrt(inputs)));
  for (std::size_t o = 0; o < outputs; ++o)
    layer.bias.push_back(static_cast<float>(0.1 * rng.normal()));
  return layer;
}

/// The network's outputs for one row, summed in double with libm's tanh.
std::vector<double> reference(const std::vector<DenseLayer>& layers, std::vector<double> x) {
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const DenseLayer& layer = layers[l];
    std::vector<double> y(layer.outputs);
    for (std::size_t o = 0; o < layer.outputs; ++o) {
      y[o] = layer.bias[o];
      for (std::size_t i = 0; i < layer.inputs; ++i)
        y[o] += static_cast<double>(layer.weight[o * layer.inputs + i]) * x[i];
      if (l + 1 < layers.size()) y[o] = std::tanh(y[o]);
    }
    x = std::move(y);
  }
  return x;
}

}  // namespace

TEST_CASE("portable_tanh is within 3 ulp of tanh over the floats that matter") {
  std::int64_t worst = 0;
  float worst_at = 0;
  // Every 64th float from 2^-30 up to saturation, and both signs.
  for (std::uint32_t bits = std::bit_cast<std::uint32_t>(0x1p-30f);
       bits < std::bit_cast<std::uint32_t>(12.0f); bits += 64) {
    for (const float x : {std::bit_cast<float>(bits), -std::bit_cast<float>(bits)}) {
      const auto exact = static_cast<float>(std::tanh(static_cast<double>(x)));
      const std::int64_t apart = ulps_apart(portable_tanh(x), exact);
      if (apart > worst) {
        worst = apart;
        worst_at = x;
      }
    }
  }
  INFO("worst at x = " << worst_at);
  CHECK(worst <= 3);
}

TEST_CASE("portable_tanh is odd, saturates to ±1 and passes NaN through") {
  for (const float x : {1e-38f, 1e-6f, 0.2499f, 0.25f, 0.7f, 3.0f, 8.99f}) {
    CHECK(portable_tanh(-x) == -portable_tanh(x));
  }
  CHECK(portable_tanh(0.0f) == 0.0f);
  CHECK(!std::signbit(portable_tanh(0.0f)));
  CHECK(std::signbit(portable_tanh(-0.0f)));
  CHECK(portable_tanh(9.5f) == 1.0f);
  CHECK(portable_tanh(std::numeric_limits<float>::infinity()) == 1.0f);
  CHECK(portable_tanh(-std::numeric_limits<float>::infinity()) == -1.0f);
  CHECK(std::isnan(portable_tanh(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("DenseNetwork computes each row alone, as a double-precision sum would") {
  Rng rng(7, stream_id("test.dense"));
  // Widths off the 16-wide blocks too: 5 actions, 1 value, 21 hidden.
  const std::vector<DenseLayer> layers = {random_layer(13, 21, rng), random_layer(21, 64, rng),
                                          random_layer(64, 5, rng)};
  DenseNetwork network(layers);
  REQUIRE(network.inputs() == 13);
  REQUIRE(network.outputs() == 5);
  constexpr std::size_t kRows = 37;
  std::vector<float> rows(kRows * 13);
  for (float& x : rows) x = static_cast<float>(2 * rng.normal());
  std::vector<float> batch(kRows * 5);
  network.forward(rows, batch);
  for (std::size_t r = 0; r < kRows; ++r) {
    std::vector<float> alone(5);
    network.forward(std::span(rows).subspan(r * 13, 13), alone);
    const std::vector<double> exact =
        reference(layers, std::vector<double>(rows.begin() + r * 13, rows.begin() + (r + 1) * 13));
    for (std::size_t o = 0; o < 5; ++o) {
      CHECK(alone[o] == batch[r * 5 + o]);
      CHECK(batch[r * 5 + o] == doctest::Approx(exact[o]).epsilon(1e-4));
    }
  }
}

TEST_CASE("Every vector unit gives the baseline's bits") {
  // The rollouts act on the widest unit the CPU has; a policy must train to the same bytes on a
  // CPU without it. Widths padded to 144, 64, 32 and 16 cover four-register blocks of every unit
  // and the one-register blocks after them.
  Rng rng(11, stream_id("test.dense.units"));
  const std::vector<DenseLayer> layers = {random_layer(23, 136, rng), random_layer(136, 64, rng),
                                          random_layer(64, 21, rng), random_layer(21, 5, rng)};
  constexpr std::size_t kRows = 29;
  std::vector<float> rows(kRows * 23);
  for (float& x : rows) x = static_cast<float>(8 * rng.normal());
  // Saturating, infinite and NaN inputs go through the same tanh lanes.
  rows[3] = std::numeric_limits<float>::infinity();
  rows[30] = -std::numeric_limits<float>::infinity();
  rows[60] = std::numeric_limits<float>::quiet_NaN();
  rows[90] = 1e30f;
  using Unit = DenseNetwork::VectorUnit;
  DenseNetwork baseline(layers, Unit::kBaseline);
  std::vector<float> expected(kRows * 5);
  baseline.forward(rows, expected);
  int compared = 0;
  for (const Unit unit : {Unit::kAvx2, Unit::kAvx512}) {
    if (!DenseNetwork::supported(unit)) continue;
    ++compared;
    DenseNetwork network(layers, unit);
    std::vector<float> out(kRows * 5);
    network.forward(rows, out);
    for (std::size_t i = 0; i < out.size(); ++i) {
      INFO("unit " << static_cast<int>(unit) << ", output " << i);
      CHECK(std::bit_cast<std::uint32_t>(out[i]) == std::bit_cast<std::uint32_t>(expected[i]));
    }
  }
  MESSAGE(compared << " vector units beside the baseline compared on this CPU");
  WARN_MESSAGE(compared > 0, "this CPU has no AVX2: only the baseline unit ran");
}

}  // namespace dynamix
