// Training dynamics: progress in reference-batch steps, power-law convergence (with an optional
// exponential plateau phase), noise scale.
#include "sim/training/dynamics.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"

namespace dynamix {
namespace {

// Irwin-Hall: the sum of four uniforms, scaled to unit variance. Bounded (|z| < 3.5) and several
// times cheaper than Box-Muller, which matters once per worker per iteration.
double approximate_normal(Rng& rng) {
  return (rng.uniform() + rng.uniform() + rng.uniform() + rng.uniform() - 2.0) * std::sqrt(3.0);
}

double validation_final_accuracy(const StatisticalModel& model, Optimizer optimizer) {
  return optimizer == Optimizer::kAdam ? model.final_accuracy_adam : model.final_accuracy;
}

/// e^(-1/τ), where the plateau phase's normalized remainder reaches 0 at progress 1.
double plateau_floor(const Workload& workload) {
  const StatisticalModel& model = workload.statistics;
  if (model.plateau_share == 0) return 0.0;
  DYNAMIX_CHECK(model.plateau_share > 0 && model.plateau_share <= 1 && model.plateau_progress &&
                    *model.plateau_progress > 0,
                "workload '" << workload.name << "' has plateau_share " << model.plateau_share
                             << " without a positive plateau_progress");
  return std::exp(-1.0 / *model.plateau_progress);
}

}  // namespace

double statistical_efficiency(double batch, double reference_batch, double noise_scale) {
  return (noise_scale + reference_batch) / (noise_scale + batch);
}

double adascale_gain(double batch, double reference_batch, double noise_scale) {
  return batch / reference_batch * statistical_efficiency(batch, reference_batch, noise_scale);
}

double rule_lr_factor(LrRule rule, double scale, double gain) {
  switch (rule) {
    case LrRule::kNone:
      return 1.0;
    case LrRule::kAdaScale:
      return gain;
    case LrRule::kLinear:
      return scale;
    case LrRule::kSqrt:
      return std::sqrt(scale);
  }
  return 1.0;
}

double sgd_lr_scale(LrRule rule, Optimizer optimizer, double factor) {
  const bool squared = optimizer == Optimizer::kAdam && rule != LrRule::kAdaScale;
  return squared ? factor * factor : factor;
}

double effective_lr_scale(LrRule rule, Optimizer optimizer, double scale, double gain) {
  return sgd_lr_scale(rule, optimizer, rule_lr_factor(rule, scale, gain));
}

double progress_gain(double lr_scale, double gain) {
  return lr_scale <= gain ? lr_scale * (2.0 - lr_scale / gain) : gain;
}

double noise_scale_at_loss(const StatisticalModel& model, double loss) {
  const double exponent = std::log(model.final_noise_scale / model.initial_noise_scale) /
                          std::log(model.initial_loss / model.final_loss);
  return model.final_noise_scale * std::pow(loss / model.final_loss, -exponent);
}

double gradient_statistic_noise_at(const StatisticalModel& model, double batch) {
  if (!model.gradient_statistic_noise_samples) return model.gradient_statistic_noise;
  constexpr double kMaxNoise = 5.0;
  const double sampling = model.gradient_statistic_noise * model.gradient_statistic_noise *
                          *model.gradient_statistic_noise_samples / batch;
  const double floor = model.gradient_statistic_noise_floor;
  return std::min(kMaxNoise, std::sqrt(floor * floor + sampling));
}

TrainingDynamics::TrainingDynamics(const Workload& workload, const TrainingOptions& options,
                                   std::size_t workers, std::uint64_t seed,
                                   const DynamicsParameters& parameters)
    : model_(workload.statistics),
      options_(options),
      parameters_(parameters),
      workers_(workers),
      dataset_size_(static_cast<double>(workload.dataset_size)),
      reference_steps_(model_.reference_epochs * dataset_size_ / model_.reference_batch),
      exponent_(model_.convergence_exponent.value_or(parameters.convergence_exponent)),
      knee_(model_.convergence_knee.value_or(parameters.convergence_knee) *
            (options.optimizer == Optimizer::kAdam ? parameters.adam_knee_factor : 1.0)),
      knee_floor_(std::pow(1.0 + 1.0 / knee_, -exponent_)),
      plateau_floor_(plateau_floor(workload)),
      final_accuracy_(validation_final_accuracy(model_, options.optimizer)),
      noise_scale_exponent_(std::log(model_.final_noise_scale / model_.initial_noise_scale) /
                            std::log(model_.initial_loss / model_.final_loss)),
      batch_rng_(seed, stream_id("training")),
      gradient_rng_(seed, stream_id("training.gradients")),
      validation_rng_(seed, stream_id("training.validation")) {
  DYNAMIX_CHECK(workers > 0, "a training run needs workers, got " << workers);
  DYNAMIX_CHECK(dataset_size_ > 0 && reference_steps_ > 0,
                "workload '" << workload.name << "' has dataset_size " << dataset_size_);
  advance_to(0.0);
}

double TrainingDynamics::remaining_fraction(double progress) const {
  const double power = std::pow(1.0 + progress / knee_, -exponent_);
  const double fast = std::max(0.0, (power - knee_floor_) / (1.0 - knee_floor_));
  if (model_.plateau_share == 0) return fast;
  const double decay = std::exp(-progress / *model_.plateau_progress);
  const double slow = std::max(0.0, (decay - plateau_floor_) / (1.0 - plateau_floor_));
  return (1.0 - model_.plateau_share) * fast + model_.plateau_share * slow;
}

void TrainingDynamics::advance_to(double progress) {
  progress_ = progress;
  remaining_ = remaining_fraction(progress_);
  train_loss_ = model_.final_loss + (model_.initial_loss - model_.final_loss) * remaining_;
  noise_scale_ =
      model_.final_noise_scale * std::pow(train_loss_ / model_.final_loss, -noise_scale_exponent_);
}

double TrainingDynamics::final_accuracy_estimate() const {
  return std::max(model_.initial_accuracy, final_accuracy_ - penalty_);
}

double TrainingDynamics::validation_accuracy() const {
  const double ceiling = final_accuracy_estimate();
  return ceiling - (ceiling - model_.initial_accuracy) * remaining_;
}

void TrainingDynamics::count_samples(double batch, IterationStats& stats) {
  const double epochs_before = samples_ / dataset_size_;
  samples_ += batch;
  stats.epoch = samples_ / dataset_size_;
  stats.epoch_completed = std::floor(stats.epoch) > std::floor(epochs_before);
  const double per_epoch = options_.validations_per_epoch;
  stats.validation_due =
      std::floor(stats.epoch * per_epoch) > std::floor(epochs_before * per_epoch);
}

IterationStats TrainingDynamics::advance(double batch) {
  DYNAMIX_CHECK(batch > 0, "global batch must be positive, got " << batch);
  IterationStats stats;
  stats.noise_scale = noise_scale_;
  const double scale = batch / model_.reference_batch;
  stats.efficiency = statistical_efficiency(batch, model_.reference_batch, stats.noise_scale);
  const double attainable = scale * stats.efficiency;
  lr_factor_ = std::clamp(rule_lr_factor(options_.lr_rule, scale, attainable), lr_low_, lr_high_);
  stats.lr_scale = sgd_lr_scale(options_.lr_rule, options_.optimizer, lr_factor_);
  stats.gain = progress_gain(stats.lr_scale, attainable);

  const double before = progress_;
  advance_to(std::min(1.0, progress_ + stats.gain / reference_steps_));
  if (scale > 1.0) {
    // Large-batch harm weighs more early in training (Smith et al. 2018: growing the batch late
    // is benign); weight 2(1 - p) integrates to 1 over a full run.
    const double early_weight = 2.0 * (1.0 - 0.5 * (before + progress_));
    const double rate =
        parameters_.cooling_penalty * std::max(0.0, std::log(scale / stats.lr_scale)) +
        parameters_.overshoot_penalty * std::max(0.0, std::log(stats.lr_scale / attainable));
    penalty_ += early_weight * (progress_ - before) * rate;
  }

  count_samples(batch, stats);
  stats.progress = progress_;
  return stats;
}

IterationStats TrainingDynamics::step(std::span<const int> batches, std::span<double> grad_std_norm,
                                      std::span<double> grad_var_norm) {
  DYNAMIX_CHECK(!batches.empty() && batches.size() <= workers_ &&
                    grad_std_norm.size() == batches.size() &&
                    grad_var_norm.size() == batches.size(),
                "step needs one batch and two statistics per present worker (at most "
                    << workers_ << "), got " << batches.size() << ", " << grad_std_norm.size()
                    << ", " << grad_var_norm.size());
  double batch = 0;
  for (const int worker_batch : batches) {
    DYNAMIX_CHECK(worker_batch > 0, "worker batch must be positive, got " << worker_batch);
    batch += worker_batch;
  }

  IterationStats stats = advance(batch);

  const double loss = train_loss_;
  const double accuracy = model_.final_train_accuracy -
                          (model_.final_train_accuracy - model_.initial_accuracy) * remaining_;
  const double sampling = 1.0 / std::sqrt(batch);
  stats.train_loss = std::max(0.0, loss * (1.0 + sampling * batch_rng_.normal()));
  stats.train_accuracy = std::clamp(
      accuracy + std::sqrt(accuracy * (1.0 - accuracy)) * sampling * batch_rng_.normal(), 0.0, 1.0);

  // B_simple = tr(Σ)/|G|² ≈ κ·B_noise; a mean over b samples has normalized variance B_simple/b.
  // exp(σz - σ²/2) has mean 1: a window's mean over iterations and ranks, like the real
  // estimator's ratio of window means, centres on κ·B_noise however noisy each iteration is.
  const double estimated_noise_scale = stats.noise_scale * model_.noise_scale_estimate_ratio;
  for (std::size_t i = 0; i < batches.size(); ++i) {
    const double sigma = gradient_statistic_noise_at(model_, batches[i]);
    const double variance =
        estimated_noise_scale / batches[i] *
        std::exp(sigma * approximate_normal(gradient_rng_) - 0.5 * sigma * sigma);
    grad_var_norm[i] = variance;
    grad_std_norm[i] = std::sqrt(variance);
  }
  return stats;
}

void TrainingDynamics::bound_lr_factor(double low, double high) {
  DYNAMIX_CHECK(low >= 0 && low <= high, "LR factor bounds [" << low << ", " << high << "]");
  lr_low_ = low;
  lr_high_ = high;
}

double TrainingDynamics::validate() {
  const double accuracy = validation_accuracy();
  const double spread = options_.validation_noise.value_or(
      std::sqrt(accuracy * (1.0 - accuracy) / model_.validation_size));
  return std::clamp(accuracy + spread * validation_rng_.normal(), 0.0, 1.0);
}

}  // namespace dynamix
