// The reward study of docs/environment.md: does the episode return rank static batch schedules
// the way time to target does? Run with `build/tests/gym_tests --test-suite=slow`.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <numeric>
#include <sstream>

#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"

namespace dynamix {
namespace {

struct StudyCase {
  const char* scenario;
  std::vector<std::string> overrides;
};

struct Outcome {
  double time_to_target_s;
  double final_accuracy;
  double time_to_target_return;
  /// The same without the charge for missing the target (RewardOptions::charge_miss off).
  double uncharged_return;
  double dynamix_return;
};

// Average ranks, ties sharing the mean of their positions.
std::vector<double> ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return values[a] < values[b]; });
  std::vector<double> result(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) result[order[k]] = (static_cast<double>(i + j) / 2) + 1;
    i = j + 1;
  }
  return result;
}

double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const std::vector<double> rx = ranks(x), ry = ranks(y);
  const double n = static_cast<double>(x.size());
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / n;
  const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0;
}

// One episode of a static batch: the time-to-target return is what the environment pays; the
// DYNAMIX return is computed from the same windows.
Outcome run_static(const std::shared_ptr<const ScenarioSource>& source, int batch,
                   std::uint64_t seed) {
  BatchSizeEnv env(source, evaluation_env_options());
  env.reset(seed, {.initial_batch = batch});
  RewardOptions dynamix_options = env.options().reward;
  dynamix_options.kind = RewardKind::kDynamix;
  std::vector<int> batches(env.workers(), batch);
  std::vector<float> dynamix_rewards(env.workers());
  Outcome outcome{std::numeric_limits<double>::infinity(), 0, 0, 0, 0};
  std::vector<float> uncharged_rewards(env.workers());
  StepResult step;
  while (!env.episode_over()) {
    env.step_batches(batches, step);
    compute_rewards(dynamix_options, env.scenario().training.optimizer, env.window(),
                    dynamix_rewards);
    compute_rewards(env.reward_options(), env.scenario().training.optimizer, env.window(),
                    uncharged_rewards);
    const double workers = static_cast<double>(env.workers());
    outcome.time_to_target_return +=
        std::accumulate(step.rewards.begin(), step.rewards.end(), 0.0) / workers;
    outcome.uncharged_return +=
        std::accumulate(uncharged_rewards.begin(), uncharged_rewards.end(), 0.0) / workers;
    outcome.dynamix_return +=
        std::accumulate(dynamix_rewards.begin(), dynamix_rewards.end(), 0.0) / workers;
  }
  if (step.info.time_to_target_s) outcome.time_to_target_s = *step.info.time_to_target_s;
  outcome.final_accuracy = step.info.validation_accuracy;
  return outcome;
}

// How evaluation orders runs: by time to target, and runs that miss it after every run that
// reaches it, among themselves by final accuracy.
double merit(const Outcome& outcome) {
  return std::isfinite(outcome.time_to_target_s) ? 1e9 - outcome.time_to_target_s
                                                 : outcome.final_accuracy;
}

TEST_SUITE("slow") {
  TEST_CASE("The time-to-target return ranks static batches as time to target does") {
    const std::vector<StudyCase> cases = {
        {"quickstart.yaml", {"training.target_accuracy=0.85"}},
        {"lossy8.yaml", {"training.target_accuracy=0.85"}},
        {"background8.yaml", {"training.target_accuracy=0.85"}},
        {"ps16_incast.yaml", {"training.target_accuracy=0.75"}},
        {"hetero32.yaml", {"training.target_accuracy=0.65"}},
    };
    const std::vector<int> batches = {32, 64, 128, 256, 512, 1024};
    const std::vector<std::uint64_t> seeds = {1, 2, 3};
    std::ostringstream table;
    table << std::fixed << std::setprecision(3);
    table << "scenario,seed,batch,time_to_target_s,final_accuracy,return_time_to_target,"
             "return_uncharged,return_dynamix\n";
    std::vector<double> all_ttt_rho, all_uncharged_rho, all_dynamix_rho;
    for (const StudyCase& study : cases) {
      const auto scenario = std::make_shared<const Scenario>(load_scenario(
          std::string(DYNAMIX_SOURCE_DIR) + "/scenarios/" + study.scenario, study.overrides));
      const auto source = std::make_shared<FixedScenario>(scenario);
      for (std::uint64_t seed : seeds) {
        std::vector<double> speed, ttt_return, uncharged_return, dynamix_return;
        for (int batch : batches) {
          const Outcome outcome = run_static(source, batch, seed);
          table << study.scenario << ',' << seed << ',' << batch << ',' << outcome.time_to_target_s
                << ',' << outcome.final_accuracy << ',' << outcome.time_to_target_return << ','
                << outcome.uncharged_return << ',' << outcome.dynamix_return << '\n';
          speed.push_back(merit(outcome));
          ttt_return.push_back(outcome.time_to_target_return);
          uncharged_return.push_back(outcome.uncharged_return);
          dynamix_return.push_back(outcome.dynamix_return);
        }
        const double ttt_rho = spearman(ttt_return, speed);
        const double uncharged_rho = spearman(uncharged_return, speed);
        const double dynamix_rho = spearman(dynamix_return, speed);
        table << "# " << study.scenario << " seed " << seed << ": spearman time_to_target "
              << ttt_rho << ", uncharged " << uncharged_rho << ", dynamix " << dynamix_rho << '\n';
        all_ttt_rho.push_back(ttt_rho);
        all_uncharged_rho.push_back(uncharged_rho);
        all_dynamix_rho.push_back(dynamix_rho);
      }
    }
    const auto mean = [](const std::vector<double>& v) {
      return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    table << "# mean spearman: time_to_target " << mean(all_ttt_rho) << ", uncharged "
          << mean(all_uncharged_rho) << ", dynamix " << mean(all_dynamix_rho) << '\n';
    std::cout << table.str();
    for (double rho : all_ttt_rho) CHECK(rho >= 0.9);
  }
}

}  // namespace
}  // namespace dynamix
