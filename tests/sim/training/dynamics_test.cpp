// Training dynamics: efficiency, noise scale, progress, generalization penalty, SGD vs Adam.
#include "sim/training/dynamics.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

namespace dynamix {
namespace {

const Workload& resnet18() {
  static const WorkloadCatalog kCatalog = WorkloadCatalog::builtin();
  return kCatalog.at("resnet18-cifar10");
}

TrainingOptions options_with(Optimizer optimizer, LrRule rule) {
  return {.optimizer = optimizer, .lr_rule = rule, .target_accuracy = 0.9};
}

/// Runs `epochs` epochs (0: to convergence) with every one of `workers` at `batch`.
TrainingDynamics train(const TrainingOptions& options, int batch, double epochs,
                       std::size_t workers = 1, std::uint64_t seed = 1) {
  TrainingDynamics dynamics(resnet18(), options, workers, seed);
  const std::vector<int> batches(workers, batch);
  std::vector<double> std_norm(workers), var_norm(workers);
  while (epochs > 0 ? dynamics.epochs() < epochs : dynamics.progress() < 1.0) {
    dynamics.step(batches, std_norm, var_norm);
  }
  return dynamics;
}

TEST_CASE("Statistical efficiency falls with the batch and rises with the noise scale") {
  CHECK(statistical_efficiency(128, 128, 500) == doctest::Approx(1.0));
  CHECK(statistical_efficiency(1024, 128, 500) < statistical_efficiency(512, 128, 500));
  CHECK(statistical_efficiency(1024, 128, 5000) > statistical_efficiency(1024, 128, 500));
  CHECK(adascale_gain(1024, 128, 1e9) == doctest::Approx(8.0).epsilon(1e-6));
  CHECK(adascale_gain(1e9, 128, 500) == doctest::Approx(1.0 + 500.0 / 128).epsilon(1e-6));
}

TEST_CASE("The noise scale grows as the loss falls, from its initial to its final value") {
  const StatisticalModel& model = resnet18().statistics;
  CHECK(noise_scale_at_loss(model, model.initial_loss) ==
        doctest::Approx(model.initial_noise_scale));
  CHECK(noise_scale_at_loss(model, model.final_loss) == doctest::Approx(model.final_noise_scale));
  TrainingDynamics dynamics(resnet18(), options_with(Optimizer::kSgd, LrRule::kLinear), 1, 1);
  std::vector<int> batch{128};
  std::vector<double> std_norm(1), var_norm(1);
  double loss = dynamics.train_loss();
  double noise_scale = dynamics.noise_scale();
  for (int i = 0; i < 2000; ++i) {
    const IterationStats stats = dynamics.step(batch, std_norm, var_norm);
    CHECK(dynamics.train_loss() < loss);
    CHECK(stats.noise_scale >= noise_scale);
    loss = dynamics.train_loss();
    noise_scale = stats.noise_scale;
  }
}

TEST_CASE("A larger batch makes more progress per step but less per sample") {
  const TrainingOptions options = options_with(Optimizer::kSgd, LrRule::kLinear);
  std::vector<double> progress_per_step, progress_per_sample;
  for (const int batch : {32, 128, 512, 2048}) {
    TrainingDynamics dynamics(resnet18(), options, 1, 1);
    std::vector<double> std_norm(1), var_norm(1);
    const IterationStats stats = dynamics.step(std::vector<int>{batch}, std_norm, var_norm);
    progress_per_step.push_back(stats.progress);
    progress_per_sample.push_back(stats.progress / batch);
  }
  for (std::size_t i = 1; i < progress_per_step.size(); ++i) {
    CHECK(progress_per_step[i] > progress_per_step[i - 1]);
    CHECK(progress_per_sample[i] < progress_per_sample[i - 1]);
  }
}

TEST_CASE("Only the global batch matters for progress, however it is split") {
  const TrainingOptions options = options_with(Optimizer::kSgd, LrRule::kLinear);
  TrainingDynamics even(resnet18(), options, 4, 1);
  TrainingDynamics uneven(resnet18(), options, 4, 1);
  std::vector<double> std_norm(4), var_norm(4);
  for (int i = 0; i < 100; ++i) {
    even.step(std::vector<int>{64, 64, 64, 64}, std_norm, var_norm);
    uneven.step(std::vector<int>{128, 64, 32, 32}, std_norm, var_norm);
  }
  CHECK(even.progress() == uneven.progress());
  CHECK(even.validation_accuracy() == uneven.validation_accuracy());
}

TEST_CASE("A worker's gradient variance grows as its batch shrinks") {
  TrainingDynamics dynamics(resnet18(), options_with(Optimizer::kSgd, LrRule::kLinear), 3, 5);
  std::vector<double> std_norm(3), var_norm(3);
  const IterationStats stats = dynamics.step(std::vector<int>{256, 64, 16}, std_norm, var_norm);
  CHECK(var_norm[0] < var_norm[1]);
  CHECK(var_norm[1] < var_norm[2]);
  CHECK(var_norm[2] == doctest::Approx(stats.noise_scale / 16).epsilon(0.25));
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(std_norm[i] * std_norm[i] == doctest::Approx(var_norm[i]));
}

TEST_CASE("The workload's gradient_statistic_noise is the log-normal spread of σ²_norm") {
  const auto log_spread = [](double noise) {
    Workload workload = resnet18();
    workload.statistics.gradient_statistic_noise = noise;
    TrainingDynamics dynamics(workload, options_with(Optimizer::kSgd, LrRule::kLinear), 1, 7);
    std::vector<double> std_norm(1), var_norm(1);
    double sum = 0, squares = 0;
    const int steps = 4000;
    for (int i = 0; i < steps; ++i) {
      const IterationStats stats = dynamics.step(std::vector<int>{64}, std_norm, var_norm);
      const double log_ratio = std::log(var_norm[0] * 64 / stats.noise_scale);
      sum += log_ratio;
      squares += log_ratio * log_ratio;
    }
    return std::sqrt(squares / steps - (sum / steps) * (sum / steps));
  };
  CHECK(log_spread(0.0) == doctest::Approx(0.0));
  CHECK(log_spread(0.05) == doctest::Approx(0.05).epsilon(0.05));
  CHECK(log_spread(0.8) == doctest::Approx(0.8).epsilon(0.05));
}

TEST_CASE("The estimator's noise is mean-one: however noisy, σ²_norm·b averages to κ·B_noise") {
  // A real window's estimate is a ratio of means over its iterations, centred on κ·B_noise; a
  // noise that were not mean-one would raise the simulated level by exp(σ²/2), 3× at σ = 1.5.
  Workload workload = resnet18();
  workload.statistics.gradient_statistic_noise = 1.5;
  workload.statistics.noise_scale_estimate_ratio = 0.25;
  TrainingDynamics dynamics(workload, options_with(Optimizer::kSgd, LrRule::kLinear), 1, 7);
  std::vector<double> std_norm(1), var_norm(1);
  double sum = 0;
  const int steps = 20000;
  for (int i = 0; i < steps; ++i) {
    const IterationStats stats = dynamics.step(std::vector<int>{64}, std_norm, var_norm);
    sum += var_norm[0] * 64 / (0.25 * stats.noise_scale);
  }
  CHECK(sum / steps == doctest::Approx(1.0).epsilon(0.1));
}

/// Loss, accuracies, progress and both gradient statistics of every step of a short run with
/// workers at 32 and 96.
std::vector<double> trace_of(const Workload& workload, const DynamicsParameters& parameters = {}) {
  TrainingDynamics dynamics(workload, options_with(Optimizer::kSgd, LrRule::kLinear), 2, 5,
                            parameters);
  std::vector<double> std_norm(2), var_norm(2), values;
  for (int i = 0; i < 400; ++i) {
    const IterationStats stats = dynamics.step(std::vector<int>{32, 96}, std_norm, var_norm);
    values.insert(values.end(), {stats.train_loss, stats.progress, stats.noise_scale, std_norm[0],
                                 var_norm[1], dynamics.validation_accuracy(), dynamics.validate()});
  }
  return values;
}

TEST_CASE("A workload's convergence shape replaces the shared one; absent, the shared one holds") {
  Workload same = resnet18();
  same.statistics.convergence_exponent = 0.7;
  same.statistics.convergence_knee = 0.002;
  CHECK(trace_of(same) == trace_of(resnet18()));
  Workload own = resnet18();
  own.statistics.convergence_exponent = 0.4;
  own.statistics.convergence_knee = 0.0005;
  CHECK(trace_of(own) ==
        trace_of(resnet18(), {.convergence_exponent = 0.4, .convergence_knee = 0.0005}));
  CHECK(trace_of(own) != trace_of(resnet18()));
  // A smaller knee and exponent: faster at first, slower later.
  const auto accuracy_at = [](const Workload& workload, double epochs) {
    TrainingDynamics dynamics(workload, options_with(Optimizer::kSgd, LrRule::kLinear), 1, 1);
    std::vector<double> std_norm(1), var_norm(1);
    while (dynamics.epochs() < epochs) dynamics.step(std::vector<int>{128}, std_norm, var_norm);
    return dynamics.validation_accuracy();
  };
  CHECK(accuracy_at(own, 1) > accuracy_at(resnet18(), 1));
  CHECK(accuracy_at(own, 100) < accuracy_at(resnet18(), 100));
}

TEST_CASE("A plateau share of 0 leaves the power law as it was, whatever its scale") {
  Workload off = resnet18();
  off.statistics.plateau_share = 0;
  off.statistics.plateau_progress = 0.05;
  CHECK(trace_of(off) == trace_of(resnet18()));
}

TEST_CASE("With a plateau term a share of the gap to the final accuracy closes exponentially") {
  // α 5 with a tiny knee: the power law's share is closed within the first steps, so what is
  // left is the plateau phase alone, (e^(-p/τ) - e^(-1/τ)) / (1 - e^(-1/τ)) of share w.
  Workload plateau = resnet18();
  StatisticalModel& m = plateau.statistics;
  m.convergence_exponent = 5;
  m.convergence_knee = 1e-6;
  m.plateau_share = 0.3;
  m.plateau_progress = 0.2;
  TrainingDynamics dynamics(plateau, options_with(Optimizer::kSgd, LrRule::kLinear), 1, 1);
  REQUIRE(m.reference_batch == 128);  // no large-batch penalty moves the final accuracy
  std::vector<double> std_norm(1), var_norm(1);
  const double floor = std::exp(-1 / 0.2);
  for (const double progress : {0.05, 0.2, 0.5, 0.9}) {
    while (dynamics.progress() < progress) {
      dynamics.step(std::vector<int>{128}, std_norm, var_norm);
    }
    const double p = dynamics.progress();
    const double gap = (m.final_accuracy - dynamics.validation_accuracy()) /
                       (m.final_accuracy - m.initial_accuracy);
    CAPTURE(p);
    CHECK(gap == doctest::Approx(0.3 * (std::exp(-p / 0.2) - floor) / (1 - floor)).epsilon(1e-3));
  }
  while (dynamics.progress() < 1) dynamics.step(std::vector<int>{128}, std_norm, var_norm);
  CHECK(dynamics.validation_accuracy() == doctest::Approx(m.final_accuracy));
  CHECK(dynamics.train_loss() == doctest::Approx(m.final_loss));
}

TEST_CASE("Bounds on the LR factor hold the rule's factor within them, as serve's guard rail") {
  TrainingDynamics dynamics(resnet18(), options_with(Optimizer::kAdam, LrRule::kLinear), 1, 1);
  std::vector<double> std_norm(1), var_norm(1);
  const std::vector<int> eightfold{1024};
  CHECK(dynamics.lr_factor() == 1);
  IterationStats stats = dynamics.step(eightfold, std_norm, var_norm);
  CHECK(dynamics.lr_factor() == 8);  // linear: S = 1024 / 128, unbounded
  CHECK(stats.lr_scale == 64);       // Adam's factor in SGD terms, squared
  dynamics.bound_lr_factor(0.5, 2);
  stats = dynamics.step(eightfold, std_norm, var_norm);
  CHECK(dynamics.lr_factor() == 2);
  CHECK(stats.lr_scale == 4);
  stats = dynamics.step(std::vector<int>{32}, std_norm, var_norm);
  CHECK(dynamics.lr_factor() == 0.5);
  dynamics.bound_lr_factor(0.1, 2);
  dynamics.step(std::vector<int>{32}, std_norm, var_norm);
  CHECK(dynamics.lr_factor() == 0.25);  // within the bounds: the rule's own
}

TEST_CASE("noise_scale_estimate_ratio scales the reported gradient statistics, nothing else") {
  Workload unbiased = resnet18();
  unbiased.statistics.noise_scale_estimate_ratio = 1.0;
  CHECK(trace_of(unbiased) == trace_of(resnet18()));
  Workload biased = resnet18();
  biased.statistics.noise_scale_estimate_ratio = 0.25;
  const std::vector<double> want = trace_of(resnet18());
  const std::vector<double> got = trace_of(biased);
  REQUIRE(got.size() == want.size());
  // Per iteration: loss, progress, B_noise, σ_norm of worker 0, σ²_norm of worker 1, accuracy,
  // validated accuracy. Only the two gradient statistics move, by √κ and κ.
  constexpr std::size_t kFields = 7;
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    if (i % kFields == 3) {
      CHECK(got[i] == doctest::Approx(0.5 * want[i]));
    } else if (i % kFields == 4) {
      CHECK(got[i] == doctest::Approx(0.25 * want[i]));
    } else {
      CHECK(got[i] == want[i]);
    }
  }
}

TEST_CASE("With gradient_statistic_noise_samples the spread shrinks as sqrt(n_ref/b) to a floor") {
  StatisticalModel model = resnet18().statistics;
  model.gradient_statistic_noise = 0.8;
  CHECK(gradient_statistic_noise_at(model, 16) == 0.8);
  CHECK(gradient_statistic_noise_at(model, 4096) == 0.8);
  model.gradient_statistic_noise_samples = 64;
  CHECK(gradient_statistic_noise_at(model, 64) == 0.8);
  CHECK(gradient_statistic_noise_at(model, 256) == doctest::Approx(0.4));
  CHECK(gradient_statistic_noise_at(model, 1) == 5.0);
  model.gradient_statistic_noise_floor = 0.3;
  CHECK(gradient_statistic_noise_at(model, 256) == doctest::Approx(0.5));
  CHECK(gradient_statistic_noise_at(model, 1e12) == doctest::Approx(0.3));
  // At n_ref without a floor the draws are today's, bit for bit.
  Workload constant = resnet18();
  constant.statistics.gradient_statistic_noise = 0.8;
  Workload at_reference = constant;
  at_reference.statistics.gradient_statistic_noise_samples = 64;
  const auto statistics = [](const Workload& workload, int batch) {
    TrainingDynamics dynamics(workload, options_with(Optimizer::kSgd, LrRule::kLinear), 1, 3);
    std::vector<double> std_norm(1), var_norm(1), values;
    for (int i = 0; i < 200; ++i) {
      dynamics.step(std::vector<int>{batch}, std_norm, var_norm);
      values.push_back(var_norm[0]);
    }
    return values;
  };
  CHECK(statistics(at_reference, 64) == statistics(constant, 64));
  CHECK(statistics(at_reference, 256) != statistics(constant, 256));
}

TEST_CASE("The same seed gives the same numbers and another seed other noise") {
  const TrainingOptions options = options_with(Optimizer::kAdam, LrRule::kSqrt);
  const auto trace = [&](std::uint64_t seed) {
    TrainingDynamics dynamics(resnet18(), options, 2, seed);
    std::vector<double> std_norm(2), var_norm(2), values;
    for (int i = 0; i < 50; ++i) {
      const IterationStats stats = dynamics.step(std::vector<int>{32, 96}, std_norm, var_norm);
      values.insert(values.end(), {stats.train_loss, stats.train_accuracy, std_norm[0], var_norm[1],
                                   dynamics.validate()});
    }
    return values;
  };
  CHECK(trace(42) == trace(42));
  CHECK(trace(42) != trace(43));
}

TEST_CASE("Reference training reaches the published accuracy; measured accuracy is noisy") {
  TrainingDynamics dynamics = train(options_with(Optimizer::kSgd, LrRule::kLinear), 128, 200);
  CHECK(dynamics.progress() == doctest::Approx(1.0));
  CHECK(dynamics.validation_accuracy() == doctest::Approx(0.9302));
  double spread = 0;
  for (int i = 0; i < 100; ++i) spread = std::max(spread, std::abs(dynamics.validate() - 0.9302));
  CHECK(spread > 0.001);
  CHECK(spread < 0.02);
}

TEST_CASE("A large batch without LR care loses accuracy; linear and AdaScale less") {
  const double reference =
      train(options_with(Optimizer::kSgd, LrRule::kLinear), 128, 200).validation_accuracy();
  const auto loss_at_4096 = [&](LrRule rule) {
    return reference - train(options_with(Optimizer::kSgd, rule), 4096, 200).validation_accuracy();
  };
  const double none = loss_at_4096(LrRule::kNone);
  const double linear = loss_at_4096(LrRule::kLinear);
  const double adascale = loss_at_4096(LrRule::kAdaScale);
  CHECK(none > 0.05);
  CHECK(none - linear > 0.015);
  CHECK(adascale <= linear);
}

TEST_CASE("Large batches harm generalization early in training, not late") {
  const TrainingOptions options = options_with(Optimizer::kSgd, LrRule::kNone);
  const auto penalty = [&](bool large_first) {
    TrainingDynamics dynamics(resnet18(), options, 1, 1);
    std::vector<double> std_norm(1), var_norm(1);
    while (dynamics.progress() < 1.0) {
      const bool early = dynamics.progress() < 0.5;
      dynamics.step(std::vector<int>{early == large_first ? 2048 : 128}, std_norm, var_norm);
    }
    return dynamics.generalization_penalty();
  };
  CHECK(penalty(true) > 2 * penalty(false));
  CHECK(train(options, 128, 0).generalization_penalty() == 0);
}

TEST_CASE("Adam gets going faster than SGD but ends lower on vision; its rule is square root") {
  const TrainingOptions sgd = options_with(Optimizer::kSgd, LrRule::kLinear);
  const TrainingOptions adam = options_with(Optimizer::kAdam, LrRule::kSqrt);
  CHECK(train(adam, 128, 2).validation_accuracy() > train(sgd, 128, 2).validation_accuracy());
  CHECK(train(adam, 128, 200).validation_accuracy() < train(sgd, 128, 200).validation_accuracy());
  CHECK(effective_lr_scale(LrRule::kSqrt, Optimizer::kAdam, 4, 3) ==
        doctest::Approx(effective_lr_scale(LrRule::kLinear, Optimizer::kSgd, 4, 3)));
  const double adam_linear_loss =
      train(adam, 128, 200).validation_accuracy() -
      train(options_with(Optimizer::kAdam, LrRule::kLinear), 2048, 200).validation_accuracy();
  const double adam_sqrt_loss =
      train(adam, 128, 200).validation_accuracy() - train(adam, 2048, 200).validation_accuracy();
  CHECK(adam_linear_loss > adam_sqrt_loss);
}

TEST_CASE("Epoch boundaries are reported once per epoch") {
  TrainingDynamics dynamics(resnet18(), options_with(Optimizer::kSgd, LrRule::kLinear), 2, 1);
  std::vector<double> std_norm(2), var_norm(2);
  int completed = 0;
  while (dynamics.epochs() < 3.0) {
    completed += dynamics.step(std::vector<int>{100, 100}, std_norm, var_norm).epoch_completed;
  }
  CHECK(completed == 3);
}

}  // namespace
}  // namespace dynamix
