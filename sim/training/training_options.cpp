// Checking a training job's options and costing its optimizer state.
#include "sim/training/training_options.h"

#include <string>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

bool in_open_unit_interval(double value) { return value > 0.0 && value < 1.0; }

}  // namespace

LrRule default_lr_rule(Optimizer optimizer) {
  return optimizer == Optimizer::kAdam ? LrRule::kSqrt : LrRule::kLinear;
}

TrainingSetup make_training_setup(const Workload& workload, const TrainingOptions& options) {
  if (!in_open_unit_interval(options.target_accuracy)) {
    throw InputError("training", 0, "target_accuracy", "a number in (0, 1)",
                     std::to_string(options.target_accuracy));
  }
  if (options.budget_epochs && !(*options.budget_epochs > 0)) {
    throw InputError("training", 0, "budget_epochs", "a number > 0",
                     std::to_string(*options.budget_epochs));
  }
  if (options.budget_time_s && !(*options.budget_time_s > 0)) {
    throw InputError("training", 0, "budget_time_s", "a number > 0",
                     std::to_string(*options.budget_time_s));
  }
  TrainingSetup setup{.workload = &workload, .options = options, .cost = workload.cost};
  setup.cost.optimizer_state_bytes_per_parameter = options.optimizer == Optimizer::kAdam ? 8 : 4;
  if (options.precision == Precision::kMixed) setup.cost.activation_bytes_per_sample /= 2;
  return setup;
}

}  // namespace dynamix
