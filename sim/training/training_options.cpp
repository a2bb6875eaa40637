// Parsing and checking a scenario's `training:` map.
#include "sim/training/training_options.h"

#include <string>

#include "sim/io/config_node.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

Optimizer parse_optimizer(const ConfigNode& node) {
  const std::string text = node.as_text();
  if (text == "sgd") return Optimizer::kSgd;
  if (text == "adam") return Optimizer::kAdam;
  node.fail("one of sgd, adam", "unknown optimizer '" + text + "'");
}

LrRule parse_lr_rule(const ConfigNode& node) {
  const std::string text = node.as_text();
  if (text == "none") return LrRule::kNone;
  if (text == "linear") return LrRule::kLinear;
  if (text == "sqrt") return LrRule::kSqrt;
  if (text == "adascale") return LrRule::kAdaScale;
  node.fail("one of none, linear, sqrt, adascale", "unknown LR rule '" + text + "'");
}

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
  return setup;
}

TrainingSetup load_training(const ConfigNode& training, const WorkloadCatalog& catalog) {
  training.reject_unknown({"workload", "optimizer", "lr_rule", "target_accuracy", "budget_epochs",
                           "budget_time_s", "validation_noise"});
  const ConfigNode workload_node = training.at("workload");
  const std::string name = workload_node.as_text();
  const Workload* workload = catalog.find(name);
  if (workload == nullptr) {
    workload_node.fail("one of " + catalog.names(), "unknown workload '" + name + "'");
  }

  TrainingOptions options;
  if (const auto node = training.find("optimizer")) options.optimizer = parse_optimizer(*node);
  options.lr_rule = default_lr_rule(options.optimizer);
  if (const auto node = training.find("lr_rule")) options.lr_rule = parse_lr_rule(*node);
  options.target_accuracy = workload->statistics.target_accuracy;
  if (const auto node = training.find("target_accuracy")) {
    options.target_accuracy = node->as_number();
    if (!in_open_unit_interval(options.target_accuracy)) node->fail("a number in (0, 1)");
  }
  if (training.has("budget_epochs")) options.budget_epochs = training.positive("budget_epochs");
  if (training.has("budget_time_s")) options.budget_time_s = training.positive("budget_time_s");
  if (!options.budget_epochs && !options.budget_time_s) {
    options.budget_epochs = workload->statistics.reference_epochs;
  }
  if (training.has("validation_noise")) {
    options.validation_noise = training.at_least_or("validation_noise", 0.0, 0.0);
  }
  return make_training_setup(*workload, options);
}

}  // namespace dynamix
