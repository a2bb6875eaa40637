// `dynamix calibrate --dynamics`.
#include "apps/calibrate_dynamics.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/calibrate_options.h"
#include "apps/knob_options.h"
#include "sim/calibration/dynamics_fit.h"
#include "sim/calibration/estimator_noise.h"
#include "sim/calibration/fitted_workload.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"
#include "studies/run_directory.h"

namespace dynamix {
namespace {

std::vector<std::string> comma_list(const std::string& text) {
  std::vector<std::string> items;
  for (const std::string_view item : split_fields(text)) {
    if (!item.empty()) items.emplace_back(item);
  }
  return items;
}

DynamicsFitOptions fit_options(const DynamicsOptions& given) {
  DynamicsFitOptions options;
  options.fit_runs = comma_list(given.fit_runs);
  for (const std::string& item : comma_list(given.fit_batches)) {
    std::size_t used = 0;
    int batch = 0;
    try {
      batch = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || batch < 1) {
      throw InputError("--dynamics-fit-batches", 0, "", "comma-separated global batches >= 1",
                       excerpt(item));
    }
    options.fit_batches.push_back(batch);
  }
  if (given.optimizer != "sgd" && given.optimizer != "adam") {
    throw InputError("--optimizer", 0, "", "sgd or adam", excerpt(given.optimizer));
  }
  options.optimizer = given.optimizer == "adam" ? Optimizer::kAdam : Optimizer::kSgd;
  options.target_accuracy = given.target_accuracy;
  options.noise_scale_weight = given.noise_scale_weight;
  options.noise_scale_estimate_ratio = given.noise_scale_estimate_ratio;
  options.fit_plateau = given.fit_plateau;
  return options;
}

void write_runs_csv(const std::filesystem::path& file, const DynamicsFit& fit) {
  CsvWriter csv(
      file, {"run", "role", "first_global_batch", "last_global_batch", "windows", "validations",
             "accuracy_rmse", "loss_rms_log_error", "noise_scale_rms_log_error",
             "measured_samples_to_target", "predicted_samples_to_target", "samples_relative_error",
             "measured_time_to_target_s", "predicted_time_to_target_s", "time_relative_error"});
  for (const RunResidual& run : fit.runs) {
    csv << run.label << (run.fitted ? "fitted" : "held-out") << run.first_batch << run.last_batch
        << run.windows << run.validations << run.accuracy_rmse << run.loss_rms_log_error
        << run.noise_scale_rms_log_error << run.measured_samples << run.predicted_samples
        << relative_error(run.predicted_samples, run.measured_samples) << run.measured_time_s
        << run.predicted_time_s << relative_error(run.predicted_time_s, run.measured_time_s);
    csv.end_row();
  }
  csv.close();
}

void write_noise_csv(const std::filesystem::path& file, const EstimatorNoiseFit& noise) {
  CsvWriter csv(file, {"global_batch", "windows", "workers", "iterations_per_window",
                       "beyond_zero_fraction", "real_log_spread",
                       "implied_gradient_statistic_noise", "fitted_gradient_statistic_noise",
                       "simulated_log_spread", "constant_noise_simulated_log_spread"});
  for (const BatchSpread& batch : noise.batches) {
    csv << batch.global_batch << batch.windows << batch.workers << batch.iterations
        << batch.non_positive_fraction << batch.real_spread << batch.implied_noise
        << batch.fitted_noise << batch.simulated_spread << batch.constant_simulated_spread;
    csv.end_row();
  }
  csv.close();
}

std::string shown(const std::optional<double>& value, double scale = 1.0) {
  return value ? format_rounded(*value * scale) : std::string("-");
}

void print_runs(const DynamicsFit& fit) {
  std::cout << "run  role  batch  validations  accuracy_rmse  samples_to_"
            << format_rounded(fit.target_accuracy) << " measured  predicted  error_%\n";
  for (const RunResidual& run : fit.runs) {
    std::cout << run.label << "  " << (run.fitted ? "fitted" : "held-out") << "  "
              << run.first_batch;
    if (run.last_batch != run.first_batch) std::cout << "->" << run.last_batch;
    std::cout << "  " << run.validations << "  " << format_rounded(run.accuracy_rmse) << "  "
              << shown(run.measured_samples) << "  " << shown(run.predicted_samples) << "  "
              << shown(relative_error(run.predicted_samples, run.measured_samples), 100) << '\n';
  }
  for (const bool fitted : {true, false}) {
    const PooledResiduals pooled = pool_residuals(fit, fitted);
    if (pooled.runs == 0) continue;
    std::cout << (fitted ? "fitted" : "held-out") << " (" << pooled.runs << " runs): accuracy RMSE "
              << format_rounded(pooled.accuracy_rmse) << ", training loss rms log error "
              << format_rounded(pooled.loss_rms_log_error) << ", B_simple rms log error "
              << format_rounded(pooled.noise_scale_rms_log_error)
              << ", median |samples to target error| "
              << (pooled.median_samples_error
                      ? format_rounded(*pooled.median_samples_error * 100) + "%"
                      : std::string("-"))
              << '\n';
  }
}

std::string noise_summary(const EstimatorNoiseFit& noise, const StatisticalModel& m) {
  if (!noise.noise) {
    return "gradient_statistic_noise not fitted: no global batch had a measurable spread; kept "
           "at " +
           format_rounded(m.gradient_statistic_noise);
  }
  std::string text = "gradient_statistic_noise " + format_rounded(*noise.noise);
  if (noise.noise_samples) {
    text += " at gradient_statistic_noise_samples " + format_rounded(*noise.noise_samples);
    text += ", gradient_statistic_noise_floor " + format_rounded(noise.noise_floor);
  }
  text += " (rms log error of the spreads " + shown(noise.rms_log_error);
  text += "; one σ at every batch: " + shown(noise.constant_noise);
  text += ", rms log error " + shown(noise.constant_rms_log_error) + ")";
  return text;
}

std::string plateau_text(const StatisticalModel& m) {
  if (m.plateau_share == 0) return "";
  return ", plateau_share " + format_rounded(m.plateau_share) + ", plateau_progress " +
         format_rounded(m.plateau_progress.value_or(0)) + " (" +
         format_rounded(m.plateau_progress.value_or(0) * m.reference_epochs) + " epochs)";
}

void print_summary(const DynamicsFit& fit, const EstimatorNoiseFit& noise) {
  const StatisticalModel& m = fit.workload.statistics;
  std::cout << "fitted " << fit.workload.name << " (LR rule " << to_string(fit.lr_rule) << ", "
            << fit.evaluations << " evaluations, objective " << format_rounded(fit.objective)
            << "): reference_epochs " << format_rounded(m.reference_epochs)
            << ", convergence_exponent " << format_rounded(m.convergence_exponent.value_or(0))
            << ", convergence_knee " << format_rounded(m.convergence_knee.value_or(0))
            << plateau_text(m) << ", final_accuracy "
            << format_rounded(fit.optimizer == Optimizer::kAdam ? m.final_accuracy_adam
                                                                : m.final_accuracy)
            << ", loss " << format_rounded(m.initial_loss) << " -> " << format_rounded(m.final_loss)
            << ", noise scale " << format_rounded(m.initial_noise_scale) << " -> "
            << format_rounded(m.final_noise_scale) << ", noise_scale_estimate_ratio "
            << format_rounded(m.noise_scale_estimate_ratio) << " (B_simple "
            << format_rounded(m.noise_scale_estimate_ratio * m.initial_noise_scale) << " -> "
            << format_rounded(m.noise_scale_estimate_ratio * m.final_noise_scale) << ")\n\n";
  print_runs(fit);
  std::cout
      << "\nper-window B_simple spread (log) by global batch (real, simulated with the fitted "
         "noise, with one σ at every batch):";
  for (const BatchSpread& batch : noise.batches) {
    std::cout << "  " << batch.global_batch << ": " << shown(batch.real_spread) << ", "
              << shown(batch.simulated_spread) << ", " << shown(batch.constant_simulated_spread);
  }
  std::cout << '\n' << noise_summary(noise, m) << '\n';
}

Workload base_workload(const DynamicsOptions& given) {
  const WorkloadCatalog catalog =
      given.catalog.empty() ? WorkloadCatalog::builtin() : WorkloadCatalog::load(given.catalog);
  if (const Workload* workload = catalog.find(given.workload)) return *workload;
  throw InputError(
      "--workload", 0, "",
      "a workload of " +
          (given.catalog.empty() ? std::string("the built-in catalog") : given.catalog) + " (" +
          catalog.names() + ")",
      excerpt(given.workload));
}

}  // namespace

bool asks_for_dynamics(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--dynamics" || arg.starts_with("--dynamics=")) return true;
  }
  return false;
}

int run_calibrate_dynamics(const std::vector<std::string>& args) {
  DynamicsOptions given;
  if (parse_knob_command_line(args, dynamics_knobs(), given)) return 0;
  const DynamicsFitOptions fit_with = fit_options(given);
  const Workload base = base_workload(given);
  RunDirectory directory(given.out, "calibrate");
  const RunsFile runs = read_runs(given.runs);
  DynamicsFit fit = fit_dynamics(runs, base, fit_with);
  const EstimatorNoiseFit noise =
      fit_estimator_noise(runs, fit.workload.statistics.noise_scale_estimate_ratio);
  apply_estimator_noise(noise, fit.workload.statistics);
  print_summary(fit, noise);
  for (const auto& [name, layout] : {std::pair{"workload.yaml", CatalogLayout::kList},
                                     std::pair{"catalog.yaml", CatalogLayout::kMap}}) {
    std::ofstream out(directory.file(name));
    out << fitted_workload_yaml(fit, noise, runs, base.name, layout);
    if (!out.flush()) throw std::runtime_error("cannot write " + directory.file(name).string());
  }
  write_runs_csv(directory.file("dynamics_fit.csv"), fit);
  write_noise_csv(directory.file("estimator_noise.csv"), noise);
  std::filesystem::copy_file(given.runs, directory.file("runs.csv"));
  directory.commit();
  std::cout << "wrote " << (directory.final_path() / "workload.yaml").string() << '\n';
  return 0;
}

}  // namespace dynamix
