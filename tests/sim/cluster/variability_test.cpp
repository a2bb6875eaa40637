// Variability: determinism per seed, spread statistics, jitter, straggler episodes mid-run.
#include "sim/cluster/variability.h"

#include <doctest/doctest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "sim/io/input_error.h"
#include "sim/scenario/scenario.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

std::vector<double> factors(std::uint64_t seed) {
  Variability variability({}, 8, seed);
  std::vector<double> result;
  for (int iteration = 0; iteration < 50; ++iteration) {
    const TimePoint now = kTimeZero + std::chrono::seconds(iteration * 60);
    for (std::size_t w = 0; w < 8; ++w) result.push_back(variability.compute_factor(w, now));
  }
  return result;
}

double stddev(const std::vector<double>& values) {
  double sum = 0, sum_sq = 0;
  for (double v : values) {
    sum += v;
    sum_sq += v * v;
  }
  const double mean = sum / values.size();
  return std::sqrt(sum_sq / values.size() - mean * mean);
}

TEST_CASE("Variability gives the same factors for the same seed and different ones otherwise") {
  CHECK(factors(7) == factors(7));
  CHECK(factors(7) != factors(8));
}

TEST_CASE("Static GPU factors spread as configured, with the configured share of outliers") {
  VariabilityOptions options = VariabilityOptions::none();
  options.gpu_spread = 0.08;
  options.outlier_probability = 0.05;
  options.outlier_slowdown = 1.5;
  const std::size_t workers = 20000;
  const Variability variability(options, workers, 3);
  std::vector<double> logs;
  std::size_t outliers = 0;
  for (std::size_t w = 0; w < workers; ++w) {
    if (variability.is_outlier(w)) {
      ++outliers;
      continue;
    }
    logs.push_back(std::log(variability.static_factor(w)));
  }
  CHECK(stddev(logs) == doctest::Approx(0.08).epsilon(0.05));
  CHECK(static_cast<double>(outliers) / workers == doctest::Approx(0.05).epsilon(0.1));
}

TEST_CASE("Per-iteration jitter has the configured spread around the static factor") {
  VariabilityOptions options = VariabilityOptions::none();
  options.jitter_sigma = 0.05;
  Variability variability(options, 1, 11);
  std::vector<double> logs;
  for (int i = 0; i < 20000; ++i) {
    logs.push_back(std::log(variability.compute_factor(0, kTimeZero + std::chrono::seconds(i))));
  }
  CHECK(stddev(logs) == doctest::Approx(0.05).epsilon(0.05));
}

TEST_CASE("Without variability every factor is one") {
  Variability variability(VariabilityOptions::none(), 4, 1);
  for (int i = 0; i < 100; ++i) {
    const TimePoint now = kTimeZero + std::chrono::hours(i);
    for (std::size_t w = 0; w < 4; ++w) {
      CHECK(variability.compute_factor(w, now) == 1.0);
      CHECK(!variability.in_straggler_episode(w, now));
    }
  }
}

TEST_CASE("Straggler episodes start mid-run and cover the expected share of time") {
  VariabilityOptions options = VariabilityOptions::none();
  options.straggler_rate_per_hour = 2;
  options.straggler_mean_duration_s = 60;
  options.straggler_slowdown = 3;
  const std::size_t workers = 50;
  Variability variability(options, workers, 5);
  std::size_t covered = 0, samples = 0, episodes = 0;
  for (std::size_t w = 0; w < workers; ++w) {
    bool was_straggling = false;
    for (int second = 0; second < 10 * 3600; second += 5) {
      const TimePoint now = kTimeZero + std::chrono::seconds(second);
      const double factor = variability.compute_factor(w, now);
      const bool straggling = variability.in_straggler_episode(w, now);
      CHECK(factor == (straggling ? 3.0 : 1.0));
      if (second == 0) CHECK(!straggling);
      episodes += straggling && !was_straggling ? 1 : 0;
      covered += straggling ? 1 : 0;
      ++samples;
      was_straggling = straggling;
    }
  }
  // Alternating renewal: busy share = mean duration / (mean gap + mean duration).
  const double expected_share = 60.0 / (1800.0 + 60.0);
  CHECK(static_cast<double>(covered) / samples == doctest::Approx(expected_share).epsilon(0.2));
  CHECK(static_cast<double>(episodes) / workers ==
        doctest::Approx(10 * 3600 / 1860.0).epsilon(0.2));
}

/// The message of loading the default scenario with `variability.ASSIGNMENT`, or "no error".
std::string error_of_set(const std::string& assignments) {
  std::vector<std::string> overrides;
  std::istringstream lines(assignments);
  for (std::string line; std::getline(lines, line);) overrides.push_back("variability." + line);
  return testing::error_of([&] { load_scenario(kDefaultScenario, overrides); });
}

TEST_CASE("Variability options load from a scenario with defaults and checked ranges") {
  const VariabilityOptions options =
      load_scenario(kDefaultScenario,
                    {"variability.gpu_spread=0.1", "variability.straggler_rate_per_hour=0"})
          .variability;
  CHECK(options.gpu_spread == doctest::Approx(0.1));
  CHECK(options.straggler_rate_per_hour == 0);
  CHECK(options.outlier_slowdown == doctest::Approx(1.5));
  CHECK(error_of_set("outlier_probability=1.5") ==
        "--set variability.outlier_probability=1.5: variability.outlier_probability: expected a "
        "number in [0, 1), found '1.5'");
  CHECK(error_of_set("straggler_slowdown=0.5") ==
        "--set variability.straggler_slowdown=0.5: variability.straggler_slowdown: expected a "
        "number in [1, 1000], found '0.5'");
  CHECK(error_of_set("spread=0.1")
            .starts_with("--set variability.spread=0.1: variability.spread: expected one of the "
                         "known keys"));
}

TEST_CASE("Variability options above their upper bounds are refused, not simulated") {
  const auto expected = [](const std::string& key, const std::string& range,
                           const std::string& value) {
    return "--set variability." + key + "=" + value + ": variability." + key + ": expected " +
           range + ", found '" + value + "'";
  };
  CHECK(error_of_set("gpu_spread=3000000000") ==
        expected("gpu_spread", "a number in [0, 3]", "3000000000"));
  CHECK(error_of_set("jitter_sigma=1e300") ==
        expected("jitter_sigma", "a number in [0, 3]", "1e300"));
  CHECK(error_of_set("straggler_slowdown=1e6") ==
        expected("straggler_slowdown", "a number in [1, 1000]", "1e6"));
  CHECK(error_of_set("minimum_factor=2") == expected("minimum_factor", "a number in (0, 1]", "2"));
  CHECK(error_of_set("straggler_mean_duration_s=1e300") ==
        expected("straggler_mean_duration_s", "a number in (0, 1e+06]", "1e300"));
  CHECK(error_of_set("gpu_spread=3\njitter_sigma=3\nminimum_factor=1") == "no error");
}

}  // namespace
}  // namespace dynamix
