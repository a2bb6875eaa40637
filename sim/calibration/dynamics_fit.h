// Fitting a workload's statistical model (sim/training/dynamics.h) to real training runs: each
// run's logged batch schedule replayed through TrainingDynamics, its noise-free validation
// accuracy, training loss and noise scale held against the logged ones; and what the fitted
// model predicts for the runs it was not fitted on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/calibration/training_runs.h"
#include "sim/training/workload.h"

namespace dynamix {

/// Windows pooled into one B_simple the fit compares with the model's noise scale.
inline constexpr std::size_t kNoiseScaleBlock = 5;

struct DynamicsFitOptions {
  /// Runs fitted, by label; when empty, fit_batches chooses.
  std::vector<std::string> fit_runs = {};
  /// Runs fitted, by their first window's global batch. When both are empty: the runs at the
  /// smallest and the largest first batch if there are three or more distinct ones (the rest
  /// are held out), else every run.
  std::vector<int> fit_batches = {};
  Optimizer optimizer = Optimizer::kSgd;
  /// Accuracy of the samples- and time-to-target comparison; by default the workload's.
  std::optional<double> target_accuracy = std::nullopt;
  /// Weight of the B_simple term in the objective (0: the noise scale is fitted to the accuracy
  /// and loss curves alone, the way the batches' time to target sees it).
  double noise_scale_weight = 1.0;
  /// κ = noise_scale_estimate_ratio held at this value (1: B_simple taken for B_noise itself);
  /// nullopt: fitted, in closed form at each evaluation as the one that makes the B_simple term
  /// least (the mean log residual of the pooled blocks), so that B_simple sets the noise scale's
  /// trend over the loss and the accuracy and loss curves its level.
  std::optional<double> noise_scale_estimate_ratio = std::nullopt;
  /// Fit the plateau term (plateau_share w and plateau_progress τ) too; false holds them at the
  /// base workload's (none unless it has them).
  bool fit_plateau = false;
  /// Evaluations of each of the two Nelder–Mead searches (the second restarts from the first)
  /// from each of the scan's best two convergence shapes.
  int max_evaluations = 500;
};

/// One run against the fitted model's replay of its schedule.
struct RunResidual {
  std::string label;
  bool fitted = false;
  int first_batch = 0;
  int last_batch = 0;
  std::size_t windows = 0;
  std::size_t validations = 0;
  /// Root mean square of predicted − measured validation accuracy.
  double accuracy_rmse = 0;
  /// Root mean square of log(predicted / measured) training loss over the windows.
  double loss_rms_log_error = 0;
  /// The same for B_simple pooled over blocks of kNoiseScaleBlock windows against κ·φ, over the
  /// blocks whose pooled estimate is positive (nullopt: none was).
  std::optional<double> noise_scale_rms_log_error;
  std::size_t noise_scale_blocks = 0;
  /// To the target accuracy, at the first validation at or above it (as time to target is
  /// measured): measured, and predicted by the replay at the run's validations (continued at its
  /// last batch and validation interval past the log); nullopt where not reached.
  std::optional<double> measured_samples;
  std::optional<double> predicted_samples;
  std::optional<double> measured_time_s;
  std::optional<double> predicted_time_s;
};

/// predicted / measured − 1 where both exist.
std::optional<double> relative_error(const std::optional<double>& predicted,
                                     const std::optional<double>& measured);

struct DynamicsFit {
  /// The base workload with the fitted statistics (reference_epochs, the convergence exponent
  /// and knee, the final accuracy of the optimizer, initial and final loss and noise scale,
  /// noise_scale_estimate_ratio κ, and with fit_plateau the plateau term).
  Workload workload;
  /// The optimizer whose final accuracy was fitted (the other keeps the base's gap to it).
  Optimizer optimizer = Optimizer::kSgd;
  /// The rule the runs' lr_factor follows against global_batch / reference_batch.
  LrRule lr_rule = LrRule::kLinear;
  double target_accuracy = 0;
  /// Whether noise_scale_estimate_ratio was fitted (else held at DynamicsFitOptions's).
  bool estimate_ratio_fitted = true;
  /// Whether the plateau term was fitted (DynamicsFitOptions::fit_plateau).
  bool plateau_fitted = false;
  /// Every run, fitted or held out, in the file's order.
  std::vector<RunResidual> runs;
  /// The fit's objective: mean squared accuracy, log-loss and log-noise-scale errors, each over
  /// its scale (docs/calibration.md).
  double objective = 0;
  int evaluations = 0;
};

/// Which runs are fitted (one flag per run); an InputError naming --dynamics-fit-runs or
/// --dynamics-fit-batches when they name no run, or a label not in the file.
std::vector<bool> choose_fitted_runs(const RunsFile& runs, const DynamicsFitOptions& options);

/// The LR rule (none, linear, square root) every window's lr_factor follows within 5%; an
/// InputError naming the worst window's line otherwise.
LrRule infer_lr_rule(const RunsFile& runs, double reference_batch);

/// Fits `base`'s statistical model to the chosen runs and compares every run with it.
DynamicsFit fit_dynamics(const RunsFile& runs, const Workload& base,
                         const DynamicsFitOptions& options);

}  // namespace dynamix
