// The hand-written categorical distribution against values computed by hand.
#include "policies/ppo/categorical.h"

#include <doctest/doctest.h>

#include <cmath>

namespace dynamix {

TEST_CASE("Categorical log-probabilities and entropy match hand-computed values") {
  // Row 0: logits (0, ln 2, ln 3) → probabilities (1/6, 2/6, 3/6). Row 1: uniform over 3.
  const torch::Tensor logits =
      torch::tensor({0.0f, std::log(2.0f), std::log(3.0f), 5.0f, 5.0f, 5.0f}).reshape({2, 3});
  const torch::Tensor actions = torch::tensor({2, 0}, torch::kInt64);

  const torch::Tensor log_prob = categorical::log_prob(logits, actions);
  CHECK(log_prob[0].item<double>() == doctest::Approx(std::log(0.5)).epsilon(1e-6));
  CHECK(log_prob[1].item<double>() == doctest::Approx(std::log(1.0 / 3)).epsilon(1e-6));

  const torch::Tensor entropy = categorical::entropy(logits);
  const double skewed =
      -(1.0 / 6 * std::log(1.0 / 6) + 2.0 / 6 * std::log(2.0 / 6) + 3.0 / 6 * std::log(3.0 / 6));
  CHECK(entropy[0].item<double>() == doctest::Approx(skewed).epsilon(1e-6));
  CHECK(entropy[1].item<double>() == doctest::Approx(std::log(3.0)).epsilon(1e-6));
}

TEST_CASE("Categorical log-probabilities stay finite for extreme logits") {
  const torch::Tensor logits = torch::tensor({1000.0f, -1000.0f, 0.0f}).reshape({1, 3});
  const torch::Tensor log_prob = categorical::log_prob(logits, torch::tensor({1}, torch::kInt64));
  CHECK(std::isfinite(log_prob[0].item<double>()));
  CHECK(log_prob[0].item<double>() == doctest::Approx(-2000.0));
  CHECK(categorical::entropy(logits)[0].item<double>() == doctest::Approx(0.0));
}

}  // namespace dynamix
