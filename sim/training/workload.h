// Workloads (model + dataset): compute cost and the parameters of their statistical model.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster/compute.h"

namespace dynamix {

/// Bounds the catalog's statistical keys accept, declared once: the catalog reader checks them
/// and the dynamics fit (sim/calibration/dynamics_fit.cpp) searches within them.
inline constexpr double kMinConvergenceExponent = 0.05;
inline constexpr double kMaxConvergenceExponent = 5.0;
inline constexpr double kMinConvergenceKnee = 1e-6;
inline constexpr double kMaxConvergenceKnee = 10.0;
inline constexpr double kMinNoiseScaleEstimateRatio = 1e-3;
inline constexpr double kMaxNoiseScaleEstimateRatio = 1e3;
inline constexpr double kMinPlateauProgress = 1e-4;
inline constexpr double kMaxPlateauProgress = 100.0;

class ConfigNode;

enum class Optimizer { kSgd, kAdam };

/// How the learning rate follows the global batch B = S·M0. kNone: not scaled ("no LR care").
enum class LrRule { kNone, kLinear, kSqrt, kAdaScale };

std::string_view to_string(Optimizer optimizer);
std::string_view to_string(LrRule rule);

/// How training progresses for one workload; every value is sourced in catalog/workloads.yaml.
struct StatisticalModel {
  /// Reference global batch M0 of the published run.
  double reference_batch = 128;
  /// Epochs the published run takes at M0 to converge; progress 1 is reached there.
  double reference_epochs = 200;
  /// Validation accuracy the published SGD run ends at (top-1, or next-token for a LM).
  double final_accuracy = 0.93;
  /// The same with Adam (lower on vision, Wilson et al. 2017).
  double final_accuracy_adam = 0.92;
  /// Training accuracy at convergence.
  double final_train_accuracy = 0.999;
  /// Accuracy of an untrained model (chance).
  double initial_accuracy = 0.1;
  /// Training loss (nats) at initialization and at convergence.
  double initial_loss = 2.3026;
  double final_loss = 0.01;
  /// Gradient noise scale B_noise (samples) at initialization and at convergence.
  double initial_noise_scale = 100;
  double final_noise_scale = 1000;
  /// Samples in the validation set (sets the sampling noise of measured accuracy).
  double validation_size = 10000;
  /// The usual target accuracy for time-to-accuracy runs.
  double target_accuracy = 0.9;
  /// Log-normal spread of each worker's per-iteration gradient statistic σ²_norm around
  /// B_noise/b: what makes the per-window noise-scale estimate as noisy as a real job's
  /// (assumed 0.05; `dynamix calibrate --dynamics` fits it, docs/calibration.md).
  double gradient_statistic_noise = 0.05;
  /// Per-worker batch n_ref at which gradient_statistic_noise is the sampling part of that
  /// spread: a worker with batch b draws σ(b) = sqrt(floor² + σ²·n_ref/b), capped at 5, since a
  /// mean over more samples is less noisy. Absent: σ at every batch.
  std::optional<double> gradient_statistic_noise_samples;
  /// The part of that spread that does not shrink with the batch (only with n_ref).
  double gradient_statistic_noise_floor = 0;
  /// κ: the ratio of what the gradient-statistics estimator measures, B_simple (McCandlish et
  /// al. 2018, App. A), to the B_noise that governs efficiency. B_simple assumes a Hessian ∝ I
  /// and is a biased proxy (their sec. 2.2); the per-worker σ²_norm are drawn around κ·φ/b while
  /// efficiency and progress use φ. 1: the estimator is unbiased (docs/calibration.md).
  double noise_scale_estimate_ratio = 1;
  /// Exponent α and knee p0 of this workload's convergence curve (1 + p/p0)^-α; absent: the
  /// values shared by every workload (DynamicsParameters).
  std::optional<double> convergence_exponent;
  std::optional<double> convergence_knee;
  /// The plateau term: the share w of the way from the initial to the final values (accuracy,
  /// loss) that a second phase closes, approaching them exponentially in progress,
  /// (e^(-p/τ) - e^(-1/τ)) / (1 - e^(-1/τ)); the power law closes the rest. Real curves that
  /// jump, then creep up to a plateau, need it (docs/sim_to_real.md). 0: one power law.
  double plateau_share = 0;
  /// τ of that phase, in progress (the fraction of reference_epochs); required with a share.
  std::optional<double> plateau_progress;
};

struct Workload {
  /// e.g. "resnet18-cifar10".
  std::string name;
  std::string model;
  std::string dataset;
  /// Where the figures come from, in one line.
  std::string source;
  ModelCost cost;
  /// Training samples per epoch.
  std::int64_t dataset_size = 0;
  StatisticalModel statistics;
};

class WorkloadCatalog {
 public:
  /// Reads a catalog YAML (`workloads: [...]`); unknown keys and bad values are InputErrors.
  static WorkloadCatalog load(const std::string& path);
  /// The catalog compiled into the binary, "embedded:/catalog/workloads.yaml".
  static WorkloadCatalog builtin();
  /// Workloads a scenario declares (`workloads:`, NAME -> the keys of a catalog entry).
  static std::vector<Workload> read_workloads(const ConfigNode& workloads);

  /// The workload named `name`, or nullptr.
  const Workload* find(std::string_view name) const;
  /// The workload named `name`; an InputError naming the known ones otherwise.
  const Workload& at(std::string_view name) const;
  const std::vector<Workload>& all() const { return workloads_; }
  /// "vgg11-cifar10, resnet18-cifar10, ..." for error messages.
  std::string names() const;

 private:
  std::vector<Workload> workloads_;
};

/// The `dynamix workloads` table: name, model, dataset, params_M, gflops_per_sample,
/// dataset_size, final_accuracy.
void print_workload_table(const WorkloadCatalog& catalog, std::ostream& out);

}  // namespace dynamix
