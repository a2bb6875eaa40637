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

TEST_CASE("A straggler with precursors slows gradually, stays at full slowdown, then recovers") {
  VariabilityOptions options = VariabilityOptions::none();
  options.straggler_rate_per_hour = 2;
  options.straggler_mean_duration_s = 60;
  options.straggler_slowdown = 3;
  options.straggler_onset_s = 40;
  options.straggler_recovery_s = 20;
  Variability ramped(options, 1, 9);
  std::vector<double> episode;
  for (int second = 0; second < 20 * 3600; ++second) {
    const double factor = ramped.compute_factor(0, kTimeZero + std::chrono::seconds(second));
    if (factor > 1) {
      episode.push_back(factor);
    } else if (!episode.empty()) {
      break;
    }
  }
  REQUIRE(episode.size() > 60);
  // The onset climbs by 2/40 a second, never jumping to the full slowdown.
  CHECK(episode.front() <= 1 + 2.0 / 40 + 1e-9);
  for (std::size_t i = 1; i < 40; ++i) {
    CHECK(episode[i] > episode[i - 1]);
    CHECK(episode[i] - episode[i - 1] == doctest::Approx(2.0 / 40));
  }
  CHECK(episode[40] == 3.0);
  CHECK(episode[episode.size() - 21] == 3.0);
  for (std::size_t i = episode.size() - 19; i < episode.size(); ++i) {
    CHECK(episode[i] < episode[i - 1]);
  }
  CHECK(episode.back() <= 1 + 2.0 / 20 + 1e-9);
}

TEST_CASE("Precursor ramps leave the episodes' timing of a step straggler in place") {
  VariabilityOptions step = VariabilityOptions::none();
  step.straggler_rate_per_hour = 2;
  step.straggler_mean_duration_s = 60;
  step.straggler_slowdown = 2;
  VariabilityOptions ramped = step;
  ramped.straggler_onset_s = 30;
  Variability plain(step, 4, 3), precursors(ramped, 4, 3);
  for (std::size_t w = 0; w < 4; ++w) {
    for (int second = 0; second < 3600; ++second) {
      const TimePoint now = kTimeZero + std::chrono::seconds(second);
      // The first episode starts at the same moment with or without its onset ramp.
      const bool started = plain.in_straggler_episode(w, now);
      CHECK(started == precursors.in_straggler_episode(w, now));
      if (started) break;
    }
  }
}

TEST_CASE("A straggler timeline replayed from the seed gives the slowdowns the run will see") {
  VariabilityOptions options = VariabilityOptions::none();
  options.straggler_rate_per_hour = 6;
  options.straggler_mean_duration_s = 60;
  options.straggler_slowdown = 3;
  options.straggler_onset_s = 30;
  options.straggler_recovery_s = 10;
  const std::size_t workers = 4;
  const StragglerTimeline timeline(options, workers, 11, kTimeZero + std::chrono::hours(2));
  Variability run(options, workers, 11);
  int slowed = 0;
  for (int second = 0; second < 2 * 3600; second += 3) {
    const TimePoint now = kTimeZero + std::chrono::seconds(second);
    for (std::size_t w = 0; w < workers; ++w) {
      const double expected = run.compute_factor(w, now);
      CHECK(timeline.slowdown(w, now) == expected);
      slowed += expected > 1 ? 1 : 0;
    }
  }
  CHECK(slowed > 0);
  // Its mean over a span lies between the span's extremes.
  const TimePoint from = kTimeZero + std::chrono::minutes(10);
  const double mean = timeline.mean_slowdown(0, from, from + std::chrono::minutes(30));
  CHECK(mean >= 1);
  CHECK(mean <= 3);
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
  CHECK(error_of_set("straggler_onset_s=-1") ==
        expected("straggler_onset_s", "a number in [0, 1e+06]", "-1"));
  CHECK(error_of_set("straggler_mean_duration_s=1e300") ==
        expected("straggler_mean_duration_s", "a number in (0, 1e+06]", "1e300"));
  CHECK(error_of_set("gpu_spread=3\njitter_sigma=3\nminimum_factor=1") == "no error");
}

}  // namespace
}  // namespace dynamix
