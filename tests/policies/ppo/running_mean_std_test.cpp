// Running observation statistics.
#include "policies/ppo/running_mean_std.h"

#include <doctest/doctest.h>

#include <vector>

namespace dynamix {

TEST_CASE("RunningMeanStd over batches equals the statistics of all rows") {
  RunningMeanStd stats(2);
  stats.update(std::vector<float>{1, 10, 3, 30}, 2);
  stats.update(std::vector<float>{5, 50}, 1);
  // Rows (1, 3, 5) and (10, 30, 50): means 3 and 30, population variances 8/3 and 800/3.
  CHECK(stats.mean()[0] == doctest::Approx(3).epsilon(1e-4));
  CHECK(stats.mean()[1] == doctest::Approx(30).epsilon(1e-4));
  CHECK(stats.variance()[0] == doctest::Approx(8.0 / 3).epsilon(1e-3));
  CHECK(stats.variance()[1] == doctest::Approx(800.0 / 3).epsilon(1e-3));

  std::vector<float> normalized(2);
  stats.normalize(std::vector<float>{3, 1000}, normalized, 5.0f);
  CHECK(normalized[0] == doctest::Approx(0).epsilon(1e-3));
  CHECK(normalized[1] == 5.0f);
}

TEST_CASE("RunningMeanStd round-trips exactly through its text form") {
  RunningMeanStd stats(3);
  stats.update(std::vector<float>{0.1f, 0.2f, 0.3f, 1.7f, -2.5f, 1e6f}, 2);
  RunningMeanStd restored(3);
  REQUIRE(restored.deserialize(stats.serialize()));
  CHECK(restored.count() == stats.count());
  CHECK(restored.mean() == stats.mean());
  CHECK(restored.variance() == stats.variance());
  CHECK_FALSE(RunningMeanStd(2).deserialize(stats.serialize()));
  CHECK_FALSE(restored.deserialize("3 garbage"));
}

}  // namespace dynamix
