// Writing the fitted workload entry.
#include "sim/calibration/fitted_workload.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "sim/io/json_writer.h"

namespace dynamix {
namespace {

struct Entry {
  std::string key;
  std::string value;
  std::string comment;
};

std::string fitted_number(double value) {
  std::ostringstream out;
  out.precision(6);
  out << value;
  return out.str();
}

/// A YAML double-quoted scalar: JSON's string syntax is YAML's.
std::string quoted(const std::string& text) {
  std::ostringstream out;
  JsonWriter writer(out);
  writer.value(std::string_view(text));
  return out.str();
}

std::string accuracy_residual(const PooledResiduals& fitted, const PooledResiduals& held_out) {
  std::string text =
      "validation accuracy RMSE " + fitted_number(fitted.accuracy_rmse) + " over the fitted runs";
  if (held_out.runs > 0) {
    text += ", " + fitted_number(held_out.accuracy_rmse);
    text += " held out";
  }
  return text;
}

std::vector<Entry> cost_entries(const Workload& w, const std::string& as_base) {
  const ModelCost& cost = w.cost;
  return {
      {"model", quoted(w.model), ""},
      {"dataset", quoted(w.dataset), ""},
      {"parameters", format_number(cost.parameters), as_base},
      {"flops_per_sample", format_number(cost.flops_per_sample), as_base},
      {"activation_bytes_per_sample", format_number(cost.activation_bytes_per_sample), as_base},
      {"cpu_seconds_per_sample", format_number(cost.cpu_seconds_per_sample), as_base},
      {"bytes_per_parameter", format_number(cost.bytes_per_parameter), as_base},
      {"dataset_size", std::to_string(w.dataset_size), as_base},
      {"validation_size", format_number(w.statistics.validation_size), as_base},
      {"classes", std::to_string(std::lround(1.0 / w.statistics.initial_accuracy)), as_base},
      {"reference_batch", format_number(w.statistics.reference_batch), as_base},
  };
}

std::vector<Entry> entries(const DynamicsFit& fit, const EstimatorNoiseFit& noise,
                           const std::string& file, const std::string& base_name) {
  const StatisticalModel& m = fit.workload.statistics;
  const std::string as_base = "as catalog entry " + base_name;
  const std::string fitted = "fitted: " + file + ", residual: ";
  const PooledResiduals in = pool_residuals(fit, true);
  const PooledResiduals out = pool_residuals(fit, false);
  const std::string accuracy = fitted + accuracy_residual(in, out);
  const std::string loss = fitted + "training loss rms log error " +
                           fitted_number(in.loss_rms_log_error) + " over the fitted runs";
  const std::string noise_scale =
      fitted + "pooled B_simple rms log error " + fitted_number(in.noise_scale_rms_log_error) +
      " over " + std::to_string(in.noise_scale_blocks) + " blocks of the fitted runs";
  std::vector<Entry> list = cost_entries(fit.workload, as_base);
  const bool adam = fit.optimizer == Optimizer::kAdam;
  const std::string gap = std::string(adam ? "final_accuracy_adam plus" : "final_accuracy less") +
                          " the SGD-Adam gap of catalog entry " + base_name;
  list.insert(
      list.end(),
      {
          {"reference_epochs", fitted_number(m.reference_epochs), accuracy},
          {"convergence_exponent", fitted_number(m.convergence_exponent.value_or(0)), accuracy},
          {"convergence_knee", fitted_number(m.convergence_knee.value_or(0)), accuracy},
          {"final_accuracy", fitted_number(m.final_accuracy), adam ? gap : accuracy},
          {"final_accuracy_adam", fitted_number(m.final_accuracy_adam), adam ? accuracy : gap},
          {"final_train_accuracy", format_number(m.final_train_accuracy), as_base},
          {"initial_loss", fitted_number(m.initial_loss), loss},
          {"final_loss", fitted_number(m.final_loss), loss},
          {"initial_noise_scale", fitted_number(m.initial_noise_scale), noise_scale},
          {"final_noise_scale", fitted_number(m.final_noise_scale), noise_scale},
          {"noise_scale_estimate_ratio", fitted_number(m.noise_scale_estimate_ratio),
           fit.estimate_ratio_fitted ? noise_scale : "held by --noise-scale-estimate-ratio"},
          {"target_accuracy", format_number(fit.target_accuracy), ""},
      });
  if (m.plateau_share > 0) {
    const std::string plateau = fit.plateau_fitted ? accuracy : as_base;
    list.push_back({"plateau_share", fitted_number(m.plateau_share), plateau});
    list.push_back({"plateau_progress", fitted_number(m.plateau_progress.value_or(0)), plateau});
  }
  if (noise.noise) {
    const std::string spreads =
        fitted + "per-window B_simple log spread rms log error " +
        fitted_number(noise.rms_log_error.value_or(0)) + " over " +
        std::to_string(
            std::count_if(noise.batches.begin(), noise.batches.end(),
                          [](const BatchSpread& b) { return b.real_spread.has_value(); })) +
        " global batches";
    list.push_back(
        {"gradient_statistic_noise", fitted_number(m.gradient_statistic_noise), spreads});
    if (m.gradient_statistic_noise_samples) {
      list.push_back({"gradient_statistic_noise_samples",
                      fitted_number(*m.gradient_statistic_noise_samples),
                      "the smallest per-worker batch with a spread"});
      list.push_back({"gradient_statistic_noise_floor",
                      fitted_number(m.gradient_statistic_noise_floor), spreads});
    }
  }
  return list;
}

}  // namespace

PooledResiduals pool_residuals(const DynamicsFit& fit, bool fitted) {
  PooledResiduals pooled;
  double accuracy = 0, loss = 0, noise = 0;
  std::size_t windows = 0;
  std::vector<double> errors;
  for (const RunResidual& run : fit.runs) {
    if (run.fitted != fitted) continue;
    ++pooled.runs;
    pooled.validations += run.validations;
    accuracy += std::pow(run.accuracy_rmse, 2) * static_cast<double>(run.validations);
    windows += run.windows;
    loss += std::pow(run.loss_rms_log_error, 2) * static_cast<double>(run.windows);
    pooled.noise_scale_blocks += run.noise_scale_blocks;
    noise += std::pow(run.noise_scale_rms_log_error.value_or(0), 2) *
             static_cast<double>(run.noise_scale_blocks);
    if (const auto error = relative_error(run.predicted_samples, run.measured_samples)) {
      errors.push_back(std::abs(*error));
    }
  }
  const auto root = [](double sum, std::size_t count) {
    return count == 0 ? 0.0 : std::sqrt(sum / static_cast<double>(count));
  };
  pooled.accuracy_rmse = root(accuracy, pooled.validations);
  pooled.loss_rms_log_error = root(loss, windows);
  pooled.noise_scale_rms_log_error = root(noise, pooled.noise_scale_blocks);
  if (!errors.empty()) {
    std::sort(errors.begin(), errors.end());
    const std::size_t half = errors.size() / 2;
    pooled.median_samples_error =
        errors.size() % 2 == 1 ? errors[half] : 0.5 * (errors[half - 1] + errors[half]);
  }
  return pooled;
}

std::string fitted_workload_yaml(const DynamicsFit& fit, const EstimatorNoiseFit& noise,
                                 const RunsFile& runs, const std::string& base_name,
                                 CatalogLayout layout) {
  const std::string file = std::filesystem::path(runs.path).filename().string();
  std::ostringstream out;
  out << "# Workload " << fit.workload.name << ": statistical model fitted by dynamix calibrate "
      << "--dynamics " << file << " (" << runs.runs.size() << " runs; LR rule "
      << to_string(fit.lr_rule) << "); cost and sizes as catalog entry " << base_name << ".\n";
  for (const std::string& line : runs.provenance) out << "#   " << line << '\n';
  out << "workloads:\n";
  const std::string indent = "    ";
  if (layout == CatalogLayout::kList) {
    out << "  - name: " << quoted(fit.workload.name) << '\n';
  } else {
    out << "  " << quoted(fit.workload.name) << ":\n";
  }
  const std::string source =
      fit.workload.source + "; statistics fitted by dynamix calibrate --dynamics " + file;
  out << indent << "source: " << quoted(source) << '\n';
  for (const Entry& entry : entries(fit, noise, file, base_name)) {
    std::string line = indent + entry.key + ": " + entry.value;
    if (!entry.comment.empty()) {
      line.resize(std::max<std::size_t>(line.size() + 1, 44), ' ');
      line += "# " + entry.comment;
    }
    out << line << '\n';
  }
  return out.str();
}

}  // namespace dynamix
