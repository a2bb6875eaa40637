// The reward formulas against values computed by hand.
#include "gym/reward.h"

#include <doctest/doctest.h>

#include <vector>

namespace dynamix {
namespace {

WindowMetrics two_workers() {
  WindowMetrics window;
  window.iterations = 10;
  window.iteration_s = 0.5;
  window.train_accuracy = 0.6;
  window.train_accuracy_change = 0.05;
  window.workers.resize(2);
  window.workers[0].batch_size = 64;
  window.workers[0].grad_std_norm = 0.3;
  window.workers[0].grad_var_norm = 0.09;
  window.workers[1].batch_size = 256;
  window.workers[1].grad_std_norm = 0.2;
  window.workers[1].grad_var_norm = 0.04;
  return window;
}

TEST_CASE("The DYNAMIX SGD reward is mean accuracy plus improvement minus time and batch terms") {
  const RewardOptions options{
      .kind = RewardKind::kDynamix, .alpha = 2, .beta = 0.4, .delta = 0.1, .eta = 0.5};
  std::vector<float> rewards(2);
  compute_rewards(options, Optimizer::kSgd, two_workers(), rewards);
  // 0.6 + 2·0.05 − 0.4·0.5 − 0.1·(log2 64 − 5) = 0.4; with log2 256: 0.6 + 0.1 − 0.2 − 0.3 = 0.2.
  CHECK(rewards[0] == doctest::Approx(0.4));
  CHECK(rewards[1] == doctest::Approx(0.2));
}

TEST_CASE("The DYNAMIX reward ignores a fall in accuracy (max{0, ΔA})") {
  WindowMetrics window = two_workers();
  window.train_accuracy_change = -0.1;
  const RewardOptions options{
      .kind = RewardKind::kDynamix, .alpha = 2, .beta = 0.4, .delta = 0.1, .eta = 0.5};
  std::vector<float> rewards(2);
  compute_rewards(options, Optimizer::kSgd, window, rewards);
  CHECK(rewards[0] == doctest::Approx(0.6 - 0.2 - 0.1));
}

TEST_CASE("The DYNAMIX Adam reward subtracts each worker's gradient noise") {
  const RewardOptions options{
      .kind = RewardKind::kDynamix, .alpha = 2, .beta = 0.4, .delta = 0.1, .eta = 0.5};
  std::vector<float> rewards(2);
  compute_rewards(options, Optimizer::kAdam, two_workers(), rewards);
  CHECK(rewards[0] == doctest::Approx(0.4 - 0.5 * (0.09 + 0.3)));
  CHECK(rewards[1] == doctest::Approx(0.2 - 0.5 * (0.04 + 0.2)));
}

TEST_CASE("The time-to-target reward is accuracy gained minus window time in time units") {
  const RewardOptions options{.kind = RewardKind::kTimeToTarget,
                              .accuracy_weight = 2,
                              .time_weight = 0.1,
                              .time_scale_s = 2.5};
  std::vector<float> rewards(2);
  compute_rewards(options, Optimizer::kAdam, two_workers(), rewards);
  // 2·0.05 − 0.1·(10·0.5)/2.5 = 0.1 − 0.2, the same for every worker.
  CHECK(rewards[0] == doctest::Approx(-0.1));
  CHECK(rewards[1] == rewards[0]);
}

TEST_CASE("A time-to-target miss is charged the time left until miss_time_s") {
  RewardOptions options{
      .kind = RewardKind::kTimeToTarget, .time_weight = 0.1, .time_scale_s = 2, .miss_time_s = 100};
  CHECK(miss_penalty(options, 60) == doctest::Approx(-0.1 * 40 / 2));
  CHECK(miss_penalty(options, 120) == 0);
  options.charge_miss = false;
  CHECK(miss_penalty(options, 60) == 0);
  options.charge_miss = true;
  options.kind = RewardKind::kDynamix;
  CHECK(miss_penalty(options, 60) == 0);
}

TEST_CASE("Reward kinds parse from their names and reject others") {
  CHECK(parse_reward_kind("dynamix") == RewardKind::kDynamix);
  CHECK(parse_reward_kind(to_string(RewardKind::kTimeToTarget)) == RewardKind::kTimeToTarget);
  CHECK_THROWS_AS(parse_reward_kind("ttt"), EnvError);
}

}  // namespace
}  // namespace dynamix
