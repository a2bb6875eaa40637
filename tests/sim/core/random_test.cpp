// Rng streams: reproducible, independent, with the moments their names promise.
#include "sim/core/random.h"

#include <doctest/doctest.h>

#include <cmath>

namespace dynamix {
namespace {

TEST_CASE("Rng gives the same stream for the same seed and stream id") {
  Rng a(1, stream_id("gpu", 3));
  Rng b(1, stream_id("gpu", 3));
  for (int i = 0; i < 100; ++i) CHECK(a.next() == b.next());
}

TEST_CASE("Rng streams differ across seeds and stream ids") {
  CHECK(Rng(1, 0).next() != Rng(2, 0).next());
  CHECK(Rng(1, stream_id("gpu", 0)).next() != Rng(1, stream_id("gpu", 1)).next());
  CHECK(stream_id("network") != stream_id("gpu"));
}

TEST_CASE("Rng normal and uniform have the expected moments") {
  Rng rng(9, 9);
  double sum = 0, sum_sq = 0, uniform_sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double x = rng.normal();
    sum += x;
    sum_sq += x * x;
    const double u = rng.uniform();
    CHECK((u >= 0 && u < 1));
    uniform_sum += u;
  }
  CHECK(std::abs(sum / n) < 0.01);
  CHECK(std::abs(sum_sq / n - 1) < 0.02);
  CHECK(std::abs(uniform_sum / n - 0.5) < 0.005);
}

}  // namespace
}  // namespace dynamix
