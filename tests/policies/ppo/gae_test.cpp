// GAE over linked per-worker streams, against a hand-computed example.
#include "policies/ppo/gae.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace dynamix {

TEST_CASE("GAE follows streams, bootstraps on truncation and not on termination") {
  // Two workers of one environment over three decisions; the episode is truncated after the
  // second decision, a new one starts and is terminated at the third.
  // Indices: t0 = {0, 1}, t1 = {2, 3}, t2 = {4, 5}.
  const std::vector<float> rewards = {1, 2, 3, 4, 5, 6};
  const std::vector<float> values = {0.5f, 1, 1.5f, 2, 2.5f, 3};
  const std::vector<std::int64_t> next = {2, 3, -1, -1, -1, -1};
  const std::vector<float> bootstrap = {0, 0, 10, 20, 0, 0};
  const double gamma = 0.9;
  const double lambda = 0.8;
  std::vector<float> advantages(6);
  std::vector<float> returns(6);
  compute_gae({rewards, values, next, bootstrap}, gamma, lambda, advantages, returns);

  // Truncated: δ = r + γ·V(final) − V.
  const double a2 = 3 + 0.9 * 10 - 1.5;
  const double a3 = 4 + 0.9 * 20 - 2;
  // Earlier steps: δ = r + γ·V(next) − V, plus γλ·A(next).
  const double a0 = (1 + 0.9 * 1.5 - 0.5) + 0.9 * 0.8 * a2;
  const double a1 = (2 + 0.9 * 2 - 1) + 0.9 * 0.8 * a3;
  // Terminated: no bootstrap.
  const double a4 = 5 - 2.5;
  const double a5 = 6 - 3.0;
  const std::vector<double> expected = {a0, a1, a2, a3, a4, a5};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CAPTURE(i);
    CHECK(advantages[i] == doctest::Approx(expected[i]).epsilon(1e-6));
    CHECK(returns[i] == doctest::Approx(expected[i] + values[i]).epsilon(1e-6));
  }
}

TEST_CASE("GAE with lambda 1 and no bootstrap gives discounted returns") {
  const std::vector<float> rewards = {1, 1, 1};
  const std::vector<float> values = {0, 0, 0};
  const std::vector<std::int64_t> next = {1, 2, -1};
  const std::vector<float> bootstrap = {0, 0, 0};
  std::vector<float> advantages(3);
  std::vector<float> returns(3);
  compute_gae({rewards, values, next, bootstrap}, 0.5, 1.0, advantages, returns);
  CHECK(returns[0] == doctest::Approx(1 + 0.5 + 0.25));
  CHECK(returns[1] == doctest::Approx(1.5));
  CHECK(returns[2] == doctest::Approx(1.0));
}

TEST_CASE("GAE discounts each step by gamma to the power of its duration (semi-MDP)") {
  // Three steps of durations 2, 0.5 and 1 reference windows, λ = 1, no bootstrap: the return of
  // step t is r_t + γ^(d_t)·G_{t+1}.
  const std::vector<float> rewards = {1, 1, 1};
  const std::vector<float> values = {0, 0, 0};
  const std::vector<std::int64_t> next = {1, 2, -1};
  const std::vector<float> bootstrap = {0, 0, 0};
  const std::vector<float> durations = {2, 0.5f, 1};
  std::vector<float> advantages(3);
  std::vector<float> returns(3);
  compute_gae({rewards, values, next, bootstrap, durations}, 0.5, 1.0, advantages, returns);
  const double g2 = 1;
  const double g1 = 1 + std::pow(0.5, 0.5) * g2;
  const double g0 = 1 + 0.25 * g1;
  CHECK(returns[2] == doctest::Approx(g2));
  CHECK(returns[1] == doctest::Approx(g1));
  CHECK(returns[0] == doctest::Approx(g0));
}

}  // namespace dynamix
