// Workload catalog: loading from YAML and printing as a table.
#include "sim/training/workload.h"

#include <array>
#include <iomanip>
#include <optional>
#include <ostream>

#include "sim/io/config_node.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {
namespace {

double open_fraction(const ConfigNode& entry, std::string_view key) {
  const double value = entry.number(key);
  if (!(value > 0.0 && value < 1.0)) entry.at(key).fail("a number in (0, 1)");
  return value;
}

std::int64_t required_count(const ConfigNode& entry, std::string_view key, std::int64_t minimum) {
  const std::int64_t value = entry.integer(key);
  if (value < minimum) entry.at(key).fail("an integer >= " + std::to_string(minimum));
  return value;
}

constexpr std::int64_t kMinDatasetSize = 1000;
constexpr double kMaxGradientStatisticNoise = 5.0;

constexpr std::array<std::string_view, 29> kWorkloadKeys = {"model",
                                                            "dataset",
                                                            "source",
                                                            "parameters",
                                                            "flops_per_sample",
                                                            "activation_bytes_per_sample",
                                                            "cpu_seconds_per_sample",
                                                            "bytes_per_parameter",
                                                            "dataset_size",
                                                            "validation_size",
                                                            "classes",
                                                            "reference_batch",
                                                            "reference_epochs",
                                                            "final_accuracy",
                                                            "final_accuracy_adam",
                                                            "final_train_accuracy",
                                                            "initial_loss",
                                                            "final_loss",
                                                            "initial_noise_scale",
                                                            "final_noise_scale",
                                                            "target_accuracy",
                                                            "gradient_statistic_noise",
                                                            "gradient_statistic_noise_samples",
                                                            "gradient_statistic_noise_floor",
                                                            "convergence_exponent",
                                                            "convergence_knee",
                                                            "noise_scale_estimate_ratio",
                                                            "plateau_share",
                                                            "plateau_progress"};

ModelCost read_cost(const ConfigNode& entry) {
  ModelCost cost;
  cost.parameters = entry.positive("parameters");
  cost.flops_per_sample = entry.positive("flops_per_sample");
  cost.activation_bytes_per_sample = entry.positive("activation_bytes_per_sample");
  cost.cpu_seconds_per_sample = entry.positive("cpu_seconds_per_sample");
  cost.bytes_per_parameter = entry.positive_or("bytes_per_parameter", cost.bytes_per_parameter);
  return cost;
}

std::optional<double> optional_in_range(const ConfigNode& entry, std::string_view key, double low,
                                        double high, const std::string& expected) {
  if (!entry.has(key)) return std::nullopt;
  const double value = entry.number(key);
  if (!(value >= low && value <= high)) entry.at(key).fail(expected);
  return value;
}

/// The gradient-statistics noise and its batch dependence; the bounds keep exp(σ·z), |z| < 3.5,
/// finite and the spread a spread, not a tail.
void read_gradient_noise(const ConfigNode& entry, StatisticalModel& model) {
  model.gradient_statistic_noise =
      entry.at_least_or("gradient_statistic_noise", 0.0, model.gradient_statistic_noise);
  if (model.gradient_statistic_noise > kMaxGradientStatisticNoise) {
    entry.at("gradient_statistic_noise").fail("a number in [0, 5]");
  }
  model.gradient_statistic_noise_samples = optional_in_range(
      entry, "gradient_statistic_noise_samples", 1.0, 1e9, "a per-worker batch in [1, 1e9]");
  const std::optional<double> floor =
      optional_in_range(entry, "gradient_statistic_noise_floor", 0.0, kMaxGradientStatisticNoise,
                        "a number in [0, 5]");
  if (floor && !model.gradient_statistic_noise_samples) {
    entry.at("gradient_statistic_noise_floor")
        .fail("gradient_statistic_noise_samples beside it (the floor of a batch-dependent noise)",
              "a floor without it");
  }
  model.gradient_statistic_noise_floor = floor.value_or(0.0);
  model.noise_scale_estimate_ratio =
      optional_in_range(entry, "noise_scale_estimate_ratio", kMinNoiseScaleEstimateRatio,
                        kMaxNoiseScaleEstimateRatio, "a ratio B_simple / B_noise in [0.001, 1000]")
          .value_or(1.0);
}

void read_convergence(const ConfigNode& entry, StatisticalModel& model) {
  model.convergence_exponent =
      optional_in_range(entry, "convergence_exponent", kMinConvergenceExponent,
                        kMaxConvergenceExponent, "an exponent in [0.05, 5]");
  model.convergence_knee = optional_in_range(entry, "convergence_knee", kMinConvergenceKnee,
                                             kMaxConvergenceKnee, "a knee in [1e-06, 10]");
  model.plateau_share =
      optional_in_range(entry, "plateau_share", 0.0, 1.0, "a share in [0, 1]").value_or(0.0);
  model.plateau_progress = optional_in_range(entry, "plateau_progress", kMinPlateauProgress,
                                             kMaxPlateauProgress, "a progress in [0.0001, 100]");
  if (model.plateau_share > 0 && !model.plateau_progress) {
    entry.at("plateau_share")
        .fail("plateau_progress beside it (the plateau phase's scale)", "a share without it");
  }
  if (model.plateau_progress && !entry.has("plateau_share")) {
    entry.at("plateau_progress")
        .fail("plateau_share beside it (the share the plateau phase closes)", "a scale without it");
  }
}

StatisticalModel read_statistics(const ConfigNode& entry) {
  StatisticalModel model;
  model.initial_accuracy = 1.0 / static_cast<double>(required_count(entry, "classes", 2));
  model.validation_size = entry.positive("validation_size");
  model.reference_batch = entry.positive("reference_batch");
  model.reference_epochs = entry.positive("reference_epochs");
  model.final_accuracy = open_fraction(entry, "final_accuracy");
  model.final_accuracy_adam = open_fraction(entry, "final_accuracy_adam");
  model.final_train_accuracy = open_fraction(entry, "final_train_accuracy");
  model.target_accuracy = open_fraction(entry, "target_accuracy");
  model.initial_loss = entry.positive("initial_loss");
  model.final_loss = entry.positive("final_loss");
  model.initial_noise_scale = entry.positive("initial_noise_scale");
  model.final_noise_scale = entry.positive("final_noise_scale");
  read_gradient_noise(entry, model);
  read_convergence(entry, model);
  for (const double accuracy :
       {model.final_accuracy, model.final_accuracy_adam, model.final_train_accuracy}) {
    if (accuracy <= model.initial_accuracy) {
      entry.fail("final accuracies above chance (1/classes = " +
                 std::to_string(model.initial_accuracy) + ")");
    }
  }
  if (model.final_loss >= model.initial_loss) {
    entry.at("final_loss").fail("a loss below initial_loss");
  }
  if (model.final_noise_scale < model.initial_noise_scale) {
    entry.at("final_noise_scale").fail("a noise scale >= initial_noise_scale");
  }
  return model;
}

/// A workload entry whose name is given (a scenario's map key) or read from `name:` (a catalog
/// list).
Workload parse_workload(const ConfigNode& entry, std::optional<std::string> name) {
  std::vector<std::string> known;
  if (!name) known.emplace_back("name");
  known.insert(known.end(), kWorkloadKeys.begin(), kWorkloadKeys.end());
  entry.reject_unknown(known);
  Workload workload;
  workload.name = name ? *name : entry.text("name");
  workload.model = entry.text("model");
  workload.dataset = entry.text("dataset");
  workload.source = entry.text_or("source", "");
  workload.cost = read_cost(entry);
  // A few batches of data would pass an epoch every iteration or two: epochs (the budget, the
  // sampler) lose their meaning, and no workload the dynamics are fitted on is that small.
  workload.dataset_size = required_count(entry, "dataset_size", kMinDatasetSize);
  workload.statistics = read_statistics(entry);
  return workload;
}

}  // namespace

std::string_view to_string(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::kSgd:
      return "sgd";
    case Optimizer::kAdam:
      return "adam";
  }
  return "?";
}

std::string_view to_string(LrRule rule) {
  switch (rule) {
    case LrRule::kNone:
      return "none";
    case LrRule::kLinear:
      return "linear";
    case LrRule::kSqrt:
      return "sqrt";
    case LrRule::kAdaScale:
      return "adascale";
  }
  return "?";
}

WorkloadCatalog WorkloadCatalog::load(const std::string& path) {
  const ConfigNode root = ConfigNode::parse(read_text(path), path);
  root.reject_unknown({"workloads"});
  WorkloadCatalog catalog;
  for (const ConfigNode& entry : root.at("workloads").items()) {
    Workload workload = parse_workload(entry, std::nullopt);
    if (catalog.find(workload.name) != nullptr) {
      entry.at("name").fail("a workload name not used before", "'" + workload.name + "' again");
    }
    catalog.workloads_.push_back(std::move(workload));
  }
  return catalog;
}

std::vector<Workload> WorkloadCatalog::read_workloads(const ConfigNode& workloads) {
  std::vector<Workload> result;
  for (const std::string& name : workloads.keys())
    result.push_back(parse_workload(workloads.at(name), name));
  return result;
}

WorkloadCatalog WorkloadCatalog::builtin() {
  // Parsed once: every scenario naming a built-in workload and every sampled scenario ask for it.
  static const WorkloadCatalog catalog =
      load(std::string(kEmbeddedPrefix) + "catalog/workloads.yaml");
  return catalog;
}

const Workload* WorkloadCatalog::find(std::string_view name) const {
  for (const Workload& workload : workloads_) {
    if (workload.name == name) return &workload;
  }
  return nullptr;
}

const Workload& WorkloadCatalog::at(std::string_view name) const {
  if (const Workload* workload = find(name)) return *workload;
  throw InputError("workload catalog", 0, "workload", "one of " + names(),
                   "unknown workload '" + std::string(name) + "'");
}

std::string WorkloadCatalog::names() const {
  std::string list;
  for (const Workload& workload : workloads_) {
    list += (list.empty() ? "" : ", ") + workload.name;
  }
  return list;
}

void print_workload_table(const WorkloadCatalog& catalog, std::ostream& out) {
  const auto flags = out.flags();
  out << std::left << std::setw(22) << "name" << std::setw(12) << "model" << std::setw(14)
      << "dataset" << std::right << std::setw(10) << "params_M" << std::setw(19)
      << "gflops_per_sample" << std::setw(14) << "dataset_size" << std::setw(16) << "final_accuracy"
      << '\n';
  for (const Workload& workload : catalog.all()) {
    out << std::left << std::setw(22) << workload.name << std::setw(12) << workload.model
        << std::setw(14) << workload.dataset << std::right << std::fixed << std::setprecision(2)
        << std::setw(10) << workload.cost.parameters / 1e6 << std::setw(19)
        << workload.cost.flops_per_sample / 1e9 << std::setw(14) << workload.dataset_size
        << std::setprecision(4) << std::setw(16) << workload.statistics.final_accuracy << '\n';
  }
  out.flags(flags);
}

}  // namespace dynamix
