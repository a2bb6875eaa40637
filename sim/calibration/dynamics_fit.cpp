// The statistical fit: replay, objective, search, residuals.
#include "sim/calibration/dynamics_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

#include "sim/calibration/nelder_mead.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"
#include "sim/training/dynamics.h"

namespace dynamix {
namespace {

// The scales that make the three kinds of error comparable: a point of accuracy, 5% of loss,
// and about the spread of a pooled B_simple (docs/calibration.md).
constexpr double kAccuracyScale = 0.01;
constexpr double kLossScale = 0.05;
constexpr double kNoiseScaleScale = 0.25;
constexpr double kLrTolerance = 0.05;
constexpr double kExtension = 4.0;
constexpr std::uint64_t kReplaySeed = 25;
constexpr double kHuge = 1e30;
// Epochs from 1/8 to 32 times the longest fitted run's, in steps of sqrt(2).
constexpr int kScanLow = -6;
constexpr int kScanHigh = 10;

/// A stretch of windows [first, last) and its pooled B_simple, in logs.
struct Block {
  std::size_t first = 0;
  std::size_t last = 0;
  double log_noise_scale = 0;
};

/// What a run measured, in the form the objective compares.
struct Measured {
  const RunLog* run = nullptr;
  std::vector<std::size_t> validated;
  std::vector<double> log_loss;
  std::vector<Block> blocks;
};

Measured measure(const RunLog& run) {
  Measured m{.run = &run, .validated = {}, .log_loss = {}, .blocks = {}};
  std::vector<NoiseScaleParts> parts;
  std::size_t block_start = 0;
  for (std::size_t w = 0; w < run.windows.size(); ++w) {
    const RunWindow& window = run.windows[w];
    if (window.validation_accuracy) m.validated.push_back(w);
    m.log_loss.push_back(std::log(window.train_loss));
    const auto part = noise_scale_parts(window);
    if (!part) continue;
    if (parts.empty()) block_start = w;
    parts.push_back(*part);
    if (parts.size() < kNoiseScaleBlock && w + 1 < run.windows.size()) continue;
    if (const auto pooled = pooled_noise_scale(parts)) {
      m.blocks.push_back(
          {.first = block_start, .last = w + 1, .log_noise_scale = std::log(*pooled)});
    }
    parts.clear();
  }
  return m;
}

struct ReplayedWindow {
  double train_loss = 0;
  double noise_scale = 0;
  double validation_accuracy = 0;
};

struct Replay {
  std::vector<ReplayedWindow> windows;
  /// The first validation (the run's own, then at its last interval past the log) at which the
  /// noise-free validation accuracy reached the target, in iterations.
  std::optional<std::int64_t> target_iteration;
};

/// The run's last validation and the iterations since the one before (from 0 when it has one).
std::pair<std::int64_t, std::int64_t> last_validation(const RunLog& run) {
  std::int64_t last = 0;
  std::int64_t interval = 0;
  for (const RunWindow& w : run.windows) {
    if (!w.validation_accuracy) continue;
    interval = w.iteration - last;
    last = w.iteration;
  }
  return {last, interval};
}

/// Continues the replay past the log at the run's last batch and validation interval until the
/// target is reached, progress is complete, or kExtension times the logged iterations are done.
void extend_to_target(const RunLog& run, TrainingDynamics& dynamics, double target,
                      Replay& replay) {
  const auto batch = static_cast<double>(run.windows.back().global_batch);
  const auto [last, interval] = last_validation(run);
  std::int64_t done = run.windows.back().iteration;
  const auto limit = static_cast<std::int64_t>(kExtension * static_cast<double>(done));
  for (std::int64_t next = last + interval * ((done - last) / interval + 1);
       next <= limit && dynamics.progress() < 1.0; next += interval) {
    for (; done < next; ++done) dynamics.advance(batch);
    if (dynamics.validation_accuracy() >= target) {
      replay.target_iteration = done;
      return;
    }
  }
}

Replay replay_run(const RunLog& run, const Workload& workload, const TrainingOptions& options,
                  std::optional<double> target) {
  TrainingDynamics dynamics(workload, options, 1, kReplaySeed);
  Replay replay;
  replay.windows.reserve(run.windows.size());
  std::int64_t done = 0;
  for (const RunWindow& window : run.windows) {
    ReplayedWindow sums;
    const auto steps = static_cast<double>(window.iteration - done);
    const auto batch = static_cast<double>(window.global_batch);
    for (; done < window.iteration; ++done) {
      sums.train_loss += dynamics.train_loss();
      sums.noise_scale += dynamics.noise_scale();
      dynamics.advance(batch);
    }
    const double accuracy = dynamics.validation_accuracy();
    replay.windows.push_back({.train_loss = sums.train_loss / steps,
                              .noise_scale = sums.noise_scale / steps,
                              .validation_accuracy = accuracy});
    if (target && window.validation_accuracy && !replay.target_iteration && accuracy >= *target) {
      replay.target_iteration = window.iteration;
    }
  }
  if (target && !replay.target_iteration) extend_to_target(run, dynamics, *target, replay);
  return replay;
}

// The bounds of noise_scale_estimate_ratio κ, as the workload key accepts it.
constexpr double kMinEstimateRatio = 1e-3;
constexpr double kMaxEstimateRatio = 1e3;

/// Sums of squared errors and their counts, per kind. The B_simple errors are log(κ·φ / B_simple)
/// at the κ given to add; noise_scale_sum keeps their sum, so that the squares at another κ, and
/// the κ that makes them least, follow in closed form.
struct Errors {
  double accuracy = 0;
  double loss = 0;
  double noise_scale = 0;
  double noise_scale_sum = 0;
  std::size_t accuracies = 0;
  std::size_t losses = 0;
  std::size_t noise_scales = 0;

  void add(const Measured& measured, const Replay& replay, double log_estimate_ratio) {
    const RunLog& run = *measured.run;
    for (const std::size_t w : measured.validated) {
      accuracy +=
          std::pow(replay.windows[w].validation_accuracy - *run.windows[w].validation_accuracy, 2);
      ++accuracies;
    }
    for (std::size_t w = 0; w < run.windows.size(); ++w) {
      loss += std::pow(std::log(replay.windows[w].train_loss) - measured.log_loss[w], 2);
      ++losses;
    }
    for (const Block& block : measured.blocks) {
      double predicted = 0;
      for (std::size_t w = block.first; w < block.last; ++w)
        predicted += replay.windows[w].noise_scale;
      predicted /= static_cast<double>(block.last - block.first);
      const double error = std::log(predicted) + log_estimate_ratio - block.log_noise_scale;
      noise_scale += error * error;
      noise_scale_sum += error;
      ++noise_scales;
    }
  }
  /// The shift of log κ that makes the B_simple errors least (their mean log residual, with κ
  /// kept within its bounds); 0 without blocks.
  double best_log_estimate_ratio() const {
    if (noise_scales == 0) return 0.0;
    return std::clamp(-noise_scale_sum / static_cast<double>(noise_scales),
                      std::log(kMinEstimateRatio), std::log(kMaxEstimateRatio));
  }
  /// The sum of squared B_simple errors with log κ shifted by `shift`.
  double noise_scale_squares(double shift) const {
    return noise_scale + 2.0 * shift * noise_scale_sum +
           static_cast<double>(noise_scales) * shift * shift;
  }
  static double mean(double sum, std::size_t count) {
    return count == 0 ? 0.0 : sum / static_cast<double>(count);
  }
  double objective(double noise_scale_weight, double shift) const {
    return mean(accuracy, accuracies) / (kAccuracyScale * kAccuracyScale) +
           mean(loss, losses) / (kLossScale * kLossScale) +
           noise_scale_weight * mean(std::max(0.0, noise_scale_squares(shift)), noise_scales) /
               (kNoiseScaleScale * kNoiseScaleScale);
  }
};

double& fitted_accuracy(StatisticalModel& model, Optimizer optimizer) {
  return optimizer == Optimizer::kAdam ? model.final_accuracy_adam : model.final_accuracy;
}

// The convergence shapes the scan starts from: α around the shared 0.7, knees a decade apart
// around the shared 0.002 (searched within the bounds the workload keys accept, workload.h).
constexpr std::array<double, 3> kScanExponents = {0.3, 0.7, 1.5};
constexpr std::array<double, 4> kScanKnees = {2e-4, 2e-3, 2e-2, 0.2};
constexpr std::size_t kSearchStarts = 2;
// The plateau term's share bounds, and its start: half the way closed by a phase whose scale is
// the longest run's epochs (its progress bounds are the workload keys', workload.h).
constexpr double kMinPlateauShare = 1e-3;
constexpr double kMaxPlateauShare = 0.999;
constexpr double kPlateauShareStart = 0.5;
/// The coordinates of decode and encode; the plateau's two follow when it is fitted.
constexpr std::size_t kShapeCoordinates = 8;

/// The search's coordinates: unconstrained logs (the accuracy's share of the way from chance to
/// 1 as a logit); of each pair of losses and noise scales the larger is the initial loss and the
/// final noise scale, as the catalog requires, so that no ordering leaves a flat region. The
/// first is the knee in epochs, reference_epochs·p0, which sets where the curve bends whatever
/// p0 is: with reference_epochs itself, the two would trade along a ridge.
StatisticalModel decode(std::span<const double> x, StatisticalModel model, Optimizer optimizer) {
  const auto value = [&](std::size_t i) { return std::exp(std::clamp(x[i], -40.0, 40.0)); };
  const double knee = std::clamp(value(7), kMinConvergenceKnee, kMaxConvergenceKnee);
  model.convergence_exponent =
      std::clamp(value(6), kMinConvergenceExponent, kMaxConvergenceExponent);
  model.convergence_knee = knee;
  model.reference_epochs = value(0) / knee;
  const double chance = model.initial_accuracy;
  // At most 99.9% of the way to 1: a catalog accuracy lies in (0, 1), and a curve still rising
  // when its runs end would otherwise drive the share to 1 within rounding.
  fitted_accuracy(model, optimizer) =
      chance + (1 - chance) * std::min(1 / (1 + 1 / value(1)), 0.999);
  model.initial_loss = std::max(value(2), value(3));
  model.final_loss = std::min(value(2), value(3));
  model.initial_noise_scale = std::min(value(4), value(5));
  model.final_noise_scale = std::max(value(4), value(5));
  if (x.size() > kShapeCoordinates) {
    model.plateau_share = std::clamp(1 / (1 + 1 / value(8)), kMinPlateauShare, kMaxPlateauShare);
    model.plateau_progress =
        std::clamp(value(9) / model.reference_epochs, kMinPlateauProgress, kMaxPlateauProgress);
  }
  return model;
}

/// `model` with the final accuracy of the optimizer not fitted at the base's gap to the fitted
/// one.
StatisticalModel with_other_optimizer(StatisticalModel model, const StatisticalModel& base,
                                      Optimizer fitted) {
  const double gap = base.final_accuracy - base.final_accuracy_adam;
  const double low = model.initial_accuracy + 1e-3;
  if (fitted == Optimizer::kAdam) {
    model.final_accuracy = std::clamp(model.final_accuracy_adam + gap, low, 0.999);
  } else {
    model.final_accuracy_adam = std::clamp(model.final_accuracy - gap, low, 0.999);
  }
  return model;
}

/// With `plateau_epochs`, the plateau term's share (as a logit) and scale in epochs follow: the
/// base's, or kPlateauShareStart and `plateau_epochs`.
std::vector<double> encode(const StatisticalModel& model, Optimizer optimizer,
                           std::optional<double> plateau_epochs = std::nullopt) {
  const double chance = model.initial_accuracy;
  StatisticalModel copy = model;
  const double share = (fitted_accuracy(copy, optimizer) - chance) / (1 - chance);
  const DynamicsParameters shared;
  const double exponent = model.convergence_exponent.value_or(shared.convergence_exponent);
  const double knee = model.convergence_knee.value_or(shared.convergence_knee);
  std::vector<double> x = {std::log(model.reference_epochs * knee),
                           std::log(share / (1 - share)),
                           std::log(model.initial_loss),
                           std::log(model.final_loss),
                           std::log(model.initial_noise_scale),
                           std::log(model.final_noise_scale),
                           std::log(exponent),
                           std::log(knee)};
  if (plateau_epochs) {
    const bool has = model.plateau_share > 0;
    const double plateau = std::clamp(has ? model.plateau_share : kPlateauShareStart,
                                      kMinPlateauShare, kMaxPlateauShare);
    x.push_back(std::log(plateau / (1 - plateau)));
    x.push_back(std::log(has ? *model.plateau_progress * model.reference_epochs : *plateau_epochs));
  }
  return x;
}

}  // namespace

namespace {

/// The chosen runs and how to replay them.
class Fitter {
 public:
  Fitter(const Workload& base, const TrainingOptions& options, std::vector<Measured> fitted,
         const DynamicsFitOptions& fit_options)
      : base_(base),
        options_(options),
        fitted_(std::move(fitted)),
        noise_scale_weight_(fit_options.noise_scale_weight),
        estimate_ratio_(fit_options.noise_scale_estimate_ratio),
        fit_plateau_(fit_options.fit_plateau) {}

  double objective(std::span<const double> x) const {
    const Errors errors = fitted_errors(x);
    const double value = errors.objective(noise_scale_weight_, log_estimate_ratio(errors));
    return std::isfinite(value) ? value : kHuge;
  }
  /// κ at `x`: the fixed one, or the one that fits the pooled B_simple blocks best.
  double estimate_ratio(std::span<const double> x) const {
    return std::exp(log_estimate_ratio(fitted_errors(x)));
  }

  /// Starts from the data: the first and lowest losses, the best accuracy, the spread of the
  /// pooled noise scales; the convergence shape and scale from a scan over α, p0 and epochs. The
  /// best point of each of the kSearchStarts best shapes, best first.
  std::vector<std::vector<double>> starts() const;
  int scan_evaluations() const {
    return static_cast<int>(kScanExponents.size() * kScanKnees.size()) * (kScanHigh - kScanLow + 1);
  }

 private:
  std::vector<std::vector<double>> scan(std::vector<double> x, double epochs) const;
  /// The fitted runs' errors at `x`, the B_simple ones at κ = 1.
  Errors fitted_errors(std::span<const double> x) const {
    Workload workload = base_;
    workload.statistics = decode(x, base_.statistics, options_.optimizer);
    Errors errors;
    for (const Measured& measured : fitted_) {
      errors.add(measured, replay_run(*measured.run, workload, options_, std::nullopt), 0.0);
    }
    return errors;
  }
  double log_estimate_ratio(const Errors& errors) const {
    return estimate_ratio_ ? std::log(*estimate_ratio_) : errors.best_log_estimate_ratio();
  }

  const Workload& base_;
  const TrainingOptions& options_;
  std::vector<Measured> fitted_;
  double noise_scale_weight_;
  std::optional<double> estimate_ratio_;
  bool fit_plateau_;
};

std::vector<std::vector<double>> Fitter::starts() const {
  StatisticalModel model = base_.statistics;
  double first_loss = 0, lowest_loss = kHuge, best_accuracy = 0, epochs = 0;
  double lowest_noise = kHuge, highest_noise = 0;
  for (const Measured& measured : fitted_) {
    const RunLog& run = *measured.run;
    first_loss = std::max(first_loss, run.windows.front().train_loss);
    for (const RunWindow& w : run.windows) {
      lowest_loss = std::min(lowest_loss, w.train_loss);
      best_accuracy = std::max(best_accuracy, w.validation_accuracy.value_or(0.0));
    }
    epochs = std::max(epochs, run.windows.back().samples / static_cast<double>(base_.dataset_size));
    for (const Block& block : measured.blocks) {
      lowest_noise = std::min(lowest_noise, std::exp(block.log_noise_scale));
      highest_noise = std::max(highest_noise, std::exp(block.log_noise_scale));
    }
  }
  model.initial_loss = first_loss * 1.05;
  model.final_loss = std::min(lowest_loss * 0.5, model.initial_loss * 0.5);
  const double chance = model.initial_accuracy;
  fitted_accuracy(model, options_.optimizer) =
      std::clamp(best_accuracy + 0.02, chance + 0.5 * (1 - chance), 0.999);
  if (highest_noise > 0) {
    model.initial_noise_scale = lowest_noise;
    model.final_noise_scale = std::max(highest_noise, lowest_noise * 1.5);
  }
  model.reference_epochs = epochs;
  return scan(encode(model, options_.optimizer,
                     fit_plateau_ ? std::optional<double>(epochs) : std::nullopt),
              epochs);
}

std::vector<std::vector<double>> Fitter::scan(std::vector<double> x, double epochs) const {
  std::vector<std::pair<double, std::vector<double>>> best_per_shape;
  for (const double exponent : kScanExponents) {
    for (const double knee : kScanKnees) {
      x[6] = std::log(exponent);
      x[7] = std::log(knee);
      std::pair<double, std::vector<double>> best{kHuge, x};
      for (int step = kScanLow; step <= kScanHigh; ++step) {
        x[0] = std::log(epochs * knee) + 0.5 * step * std::log(2.0);
        const double value = objective(x);
        if (value < best.first) best = {value, x};
      }
      best_per_shape.push_back(std::move(best));
    }
  }
  std::stable_sort(best_per_shape.begin(), best_per_shape.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::vector<double>> chosen;
  for (std::size_t i = 0; i < std::min(kSearchStarts, best_per_shape.size()); ++i) {
    chosen.push_back(best_per_shape[i].second);
  }
  return chosen;
}

double interpolate(const RunLog& run, double iteration, bool time) {
  double last_iteration = 0, last_value = 0, rate = 0;
  for (const RunWindow& w : run.windows) {
    const double value = time ? w.time_s : w.samples;
    const auto at = static_cast<double>(w.iteration);
    rate = (value - last_value) / (at - last_iteration);
    if (iteration <= at) return last_value + rate * (iteration - last_iteration);
    last_iteration = at;
    last_value = value;
  }
  return last_value + rate * (iteration - last_iteration);
}

/// The first validation at which the measured accuracy reached `target`, in iterations: how
/// time to target is measured, in the simulator as on a real job.
std::optional<std::int64_t> measured_target_iteration(const RunLog& run, double target) {
  for (const RunWindow& w : run.windows) {
    if (w.validation_accuracy && *w.validation_accuracy >= target) return w.iteration;
  }
  return std::nullopt;
}

double rms(double sum, std::size_t count) {
  return count == 0 ? 0.0 : std::sqrt(sum / static_cast<double>(count));
}

RunResidual residual(const Measured& measured, const Workload& workload,
                     const TrainingOptions& options, double target) {
  const RunLog& run = *measured.run;
  const Replay replay = replay_run(run, workload, options, target);
  Errors errors;
  errors.add(measured, replay, std::log(workload.statistics.noise_scale_estimate_ratio));
  RunResidual r;
  r.label = run.label;
  r.first_batch = run.windows.front().global_batch;
  r.last_batch = run.windows.back().global_batch;
  r.windows = run.windows.size();
  r.validations = errors.accuracies;
  r.accuracy_rmse = rms(errors.accuracy, errors.accuracies);
  r.loss_rms_log_error = rms(errors.loss, errors.losses);
  r.noise_scale_blocks = errors.noise_scales;
  if (errors.noise_scales > 0)
    r.noise_scale_rms_log_error = rms(errors.noise_scale, errors.noise_scales);
  if (const auto iteration = measured_target_iteration(run, target)) {
    r.measured_samples = interpolate(run, static_cast<double>(*iteration), false);
    r.measured_time_s = interpolate(run, static_cast<double>(*iteration), true);
  }
  if (replay.target_iteration) {
    r.predicted_samples = interpolate(run, static_cast<double>(*replay.target_iteration), false);
    r.predicted_time_s = interpolate(run, static_cast<double>(*replay.target_iteration), true);
  }
  return r;
}

}  // namespace

std::optional<double> relative_error(const std::optional<double>& predicted,
                                     const std::optional<double>& measured) {
  if (!predicted || !measured || *measured <= 0) return std::nullopt;
  return *predicted / *measured - 1.0;
}

std::vector<bool> choose_fitted_runs(const RunsFile& runs, const DynamicsFitOptions& options) {
  std::vector<bool> fitted(runs.runs.size(), false);
  std::vector<std::string> labels;
  std::set<int> first_batches;
  for (const RunLog& run : runs.runs) {
    labels.push_back(run.label);
    first_batches.insert(first_global_batch(run));
  }
  if (!options.fit_runs.empty()) {
    for (const std::string& label : options.fit_runs) {
      const auto at = std::find(labels.begin(), labels.end(), label);
      if (at == labels.end()) {
        throw InputError("--dynamics-fit-runs", 0, "",
                         "runs of " + runs.path + " (" + join(labels) + ")", excerpt(label));
      }
      fitted[static_cast<std::size_t>(at - labels.begin())] = true;
    }
    return fitted;
  }
  std::set<int> chosen(options.fit_batches.begin(), options.fit_batches.end());
  if (chosen.empty() && first_batches.size() >= 3) {
    chosen = {*first_batches.begin(), *first_batches.rbegin()};
  }
  for (std::size_t r = 0; r < runs.runs.size(); ++r) {
    fitted[r] = chosen.empty() || chosen.contains(first_global_batch(runs.runs[r]));
  }
  if (std::find(fitted.begin(), fitted.end(), true) == fitted.end()) {
    std::string batches;
    for (const int batch : first_batches)
      batches += (batches.empty() ? "" : ", ") + std::to_string(batch);
    throw InputError("--dynamics-fit-batches", 0, "",
                     "a global batch some run starts at (" + batches + ")", "none of them");
  }
  return fitted;
}

LrRule infer_lr_rule(const RunsFile& runs, double reference_batch) {
  struct Candidate {
    LrRule rule;
    double worst = 0;
    const RunWindow* at = nullptr;
  };
  std::array<Candidate, 3> candidates{
      {{LrRule::kLinear, 0, nullptr}, {LrRule::kSqrt, 0, nullptr}, {LrRule::kNone, 0, nullptr}}};
  for (const RunLog& run : runs.runs) {
    for (const RunWindow& w : run.windows) {
      const double scale = w.global_batch / reference_batch;
      for (Candidate& c : candidates) {
        const double expected = effective_lr_scale(c.rule, Optimizer::kSgd, scale, scale);
        const double error = std::abs(std::log(w.lr_factor / expected));
        if (error > c.worst) c = {c.rule, error, &w};
      }
    }
  }
  const Candidate& best =
      *std::min_element(candidates.begin(), candidates.end(),
                        [](const Candidate& a, const Candidate& b) { return a.worst < b.worst; });
  if (best.worst > std::log1p(kLrTolerance)) {
    throw InputError(runs.path, best.at->line, "lr_factor",
                     "the linear, square-root or no LR rule of global_batch / " +
                         std::to_string(static_cast<long long>(reference_batch)) +
                         " (the workload's reference_batch) within 5%",
                     std::to_string(best.at->lr_factor));
  }
  return best.rule;
}

DynamicsFit fit_dynamics(const RunsFile& runs, const Workload& base,
                         const DynamicsFitOptions& options) {
  const std::vector<bool> chosen = choose_fitted_runs(runs, options);
  DynamicsFit fit;
  fit.lr_rule = infer_lr_rule(runs, base.statistics.reference_batch);
  fit.target_accuracy = options.target_accuracy.value_or(base.statistics.target_accuracy);
  const TrainingOptions training{.optimizer = options.optimizer, .lr_rule = fit.lr_rule};
  std::vector<Measured> all;
  std::vector<Measured> fitted;
  for (std::size_t r = 0; r < runs.runs.size(); ++r) {
    all.push_back(measure(runs.runs[r]));
    if (chosen[r]) fitted.push_back(all.back());
  }
  const Fitter fitter(base, training, std::move(fitted), options);
  const auto objective = [&](std::span<const double> x) { return fitter.objective(x); };
  const NelderMeadOptions search{
      .step = 0.5, .max_evaluations = options.max_evaluations, .tolerance = 1e-9};
  fit.evaluations = fitter.scan_evaluations();
  NelderMeadResult best{.x = {}, .value = kHuge, .evaluations = 0};
  for (const std::vector<double>& start : fitter.starts()) {
    const NelderMeadResult first = nelder_mead(objective, start, search);
    const NelderMeadResult second = nelder_mead(objective, first.x, search);
    fit.evaluations += first.evaluations + second.evaluations;
    if (best.x.empty() || second.value < best.value) best = second;
  }
  fit.optimizer = options.optimizer;
  fit.workload = base;
  fit.workload.statistics = with_other_optimizer(decode(best.x, base.statistics, options.optimizer),
                                                 base.statistics, options.optimizer);
  fit.workload.statistics.noise_scale_estimate_ratio = fitter.estimate_ratio(best.x);
  fit.estimate_ratio_fitted = !options.noise_scale_estimate_ratio;
  fit.plateau_fitted = options.fit_plateau;
  fit.objective = best.value;
  for (std::size_t r = 0; r < all.size(); ++r) {
    fit.runs.push_back(residual(all[r], fit.workload, training, fit.target_accuracy));
    fit.runs.back().fitted = chosen[r];
  }
  return fit;
}

}  // namespace dynamix
