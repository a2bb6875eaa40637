// Relative errors, their median and Kendall's tau-b against hand-computed values; Nelder-Mead
// on functions with a known minimum.
#include "sim/calibration/agreement.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "sim/calibration/nelder_mead.h"

namespace dynamix {
namespace {

TEST_CASE("median_absolute takes the median of the magnitudes") {
  const std::vector<double> odd{-0.3, 0.1, 0.2};
  CHECK(median_absolute(odd) == doctest::Approx(0.2));
  const std::vector<double> even{-0.4, 0.1, 0.2, -0.05};
  CHECK(median_absolute(even) == doctest::Approx(0.15));
  CHECK(median_absolute({}) == 0);
  CHECK(relative_error(1.1, 1.0) == doctest::Approx(0.1));
}

TEST_CASE("kendall_tau counts concordant and discordant pairs, tau-b with ties") {
  const std::vector<double> a{1, 2, 3, 4};
  const std::vector<double> reversed{4, 3, 2, 1};
  CHECK(kendall_tau(a, a) == doctest::Approx(1));
  CHECK(kendall_tau(a, reversed) == doctest::Approx(-1));
  // One swapped neighbour pair: 5 concordant, 1 discordant of 6 pairs.
  const std::vector<double> one_swap{1, 3, 2, 4};
  CHECK(kendall_tau(a, one_swap) == doctest::Approx(4.0 / 6.0));
  // A tie in b: 5 untied pairs in b, 6 in a, 5 concordant: 5 / sqrt(30).
  const std::vector<double> tied{1, 2, 2, 4};
  CHECK(kendall_tau(a, tied) == doctest::Approx(5.0 / std::sqrt(30.0)));
}

TEST_CASE("nelder_mead finds the minimum of a shifted quadratic and of Rosenbrock's valley") {
  const auto bowl = [](std::span<const double> x) {
    return (x[0] - 1.5) * (x[0] - 1.5) + 4 * (x[1] + 0.5) * (x[1] + 0.5);
  };
  const NelderMeadResult found = nelder_mead(bowl, {0, 0}, {.tolerance = 1e-14});
  CHECK(found.x[0] == doctest::Approx(1.5).epsilon(1e-4));
  CHECK(found.x[1] == doctest::Approx(-0.5).epsilon(1e-4));
  const auto rosenbrock = [](std::span<const double> x) {
    return 100 * std::pow(x[1] - x[0] * x[0], 2) + std::pow(1 - x[0], 2);
  };
  const NelderMeadResult valley =
      nelder_mead(rosenbrock, {-1.2, 1}, {.max_evaluations = 2000, .tolerance = 1e-16});
  CHECK(valley.x[0] == doctest::Approx(1).epsilon(1e-3));
  CHECK(valley.x[1] == doctest::Approx(1).epsilon(1e-3));
  // Deterministic: the same start gives the same evaluations and point.
  const NelderMeadResult again =
      nelder_mead(rosenbrock, {-1.2, 1}, {.max_evaluations = 2000, .tolerance = 1e-16});
  CHECK(again.evaluations == valley.evaluations);
  CHECK(again.x == valley.x);
}

}  // namespace
}  // namespace dynamix
