// A training job's options: which optimizer and LR rule, the target and the budget (the keys of a
// scenario's `training:` map are declared in sim/scenario/scenario_knobs.cpp).
#pragma once

#include <optional>

#include "sim/cluster/compute.h"
#include "sim/training/workload.h"

namespace dynamix {

/// What the job keeps activations in: fp32, or mixed precision (fp16/bf16 activations, fp32
/// master weights, Micikevicius et al., ICLR'18), which halves activation memory.
enum class Precision { kFp32, kMixed };

struct TrainingOptions {
  Optimizer optimizer = Optimizer::kSgd;
  /// The workload's activation_bytes_per_sample are fp32 figures; kMixed halves them.
  Precision precision = Precision::kFp32;
  /// How the LR follows the global batch; by default the optimizer's own rule (SGD: linear,
  /// Adam: square root, Malladi et al. 2022).
  LrRule lr_rule = LrRule::kLinear;
  /// Validation accuracy that ends a time-to-accuracy run, in (0, 1).
  double target_accuracy = 0.9;
  /// The run stops after this many epochs, or this much simulated time, whichever comes first.
  std::optional<double> budget_epochs = std::nullopt;
  std::optional<double> budget_time_s = std::nullopt;
  /// Standard deviation of measured validation accuracy; by default the binomial sampling error
  /// of the workload's validation set, sqrt(a(1-a)/n).
  std::optional<double> validation_noise = std::nullopt;
  /// Validations an epoch, evenly spaced in samples (a real job that validates every N samples
  /// of a D-sample epoch: D / N); 1 validates at epoch ends only.
  int validations_per_epoch = 1;
  /// Host work after the gradient synchronization that does not depend on the batch: the
  /// optimizer step, the loss read-back, the job's bookkeeping. It ends every iteration.
  Duration step_overhead{};
};

/// The LR rule an optimizer is normally used with: linear for SGD (Goyal et al. 2017), square
/// root for Adam (Malladi et al. 2022).
LrRule default_lr_rule(Optimizer optimizer);

struct TrainingSetup {
  const Workload* workload = nullptr;
  TrainingOptions options;
  /// The workload's cost with the optimizer's state: 4 bytes/parameter for SGD momentum, 8 for
  /// Adam's two moments.
  ModelCost cost;
};

/// The setup for `workload` with `options`, checked (a target outside (0, 1) is an InputError).
TrainingSetup make_training_setup(const Workload& workload, const TrainingOptions& options);

}  // namespace dynamix
