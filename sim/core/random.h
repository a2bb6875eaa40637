// Seeded random streams: one root seed, one independent stream per (seed, component id).
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

namespace dynamix {

/// SplitMix64 step (Steele et al. 2014); used to expand seeds.
inline constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/// A stream id from a component name, stable across runs and platforms (FNV-1a).
inline constexpr std::uint64_t stream_id(const char* name, std::uint64_t index = 0) {
  std::uint64_t hash = 0xCBF29CE484222325ULL;
  for (const char* c = name; *c != '\0'; ++c) {
    hash = (hash ^ static_cast<unsigned char>(*c)) * 0x100000001B3ULL;
  }
  return hash ^ (index * 0x9E3779B97F4A7C15ULL);
}

/// xoshiro256** (Blackman & Vigna) with distributions written out, so that the same seed gives
/// the same numbers with every standard library.
class Rng {
 public:
  Rng(std::uint64_t seed, std::uint64_t stream) {
    std::uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ULL);
    for (auto& word : state_) word = splitmix64(s);
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  /// Uniform integer in [0, n), by multiply-shift (Lemire 2019): no division on the hot path;
  /// the bias, at most n / 2^64, is far below anything a simulation can see.
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  bool bernoulli(double p) { return uniform() < p; }
  /// Standard normal by Box-Muller (one value per call, no cached state).
  double normal() {
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  double normal(double mean, double stddev) { return mean + stddev * normal(); }
  double exponential(double rate) { return -std::log(1.0 - uniform()) / rate; }
  /// Log-normal with median 1 and log-space standard deviation `sigma`.
  double lognormal_factor(double sigma) { return std::exp(sigma * normal()); }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t state_[4];
};

}  // namespace dynamix
