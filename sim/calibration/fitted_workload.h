// The workload entry `dynamix calibrate --dynamics` writes: a catalog file in
// catalog/workloads.yaml's format, each fitted number commented with its source and residual.
#pragma once

#include <string>

#include "sim/calibration/dynamics_fit.h"
#include "sim/calibration/estimator_noise.h"

namespace dynamix {

/// Residuals pooled over runs: root mean squares weighted by each run's count.
struct PooledResiduals {
  std::size_t runs = 0;
  std::size_t validations = 0;
  double accuracy_rmse = 0;
  double loss_rms_log_error = 0;
  std::size_t noise_scale_blocks = 0;
  double noise_scale_rms_log_error = 0;
  /// Median |predicted / measured − 1| of samples to target over the runs with both.
  std::optional<double> median_samples_error;
};

/// The fitted (`fitted`) or held-out runs' residuals pooled.
PooledResiduals pool_residuals(const DynamicsFit& fit, bool fitted);

/// How the entry is laid out: a `workloads:` list entry with `name:` (catalog/workloads.yaml,
/// WorkloadCatalog::load) or a `workloads:` map keyed by name (a scenario's `catalog:` file).
enum class CatalogLayout { kList, kMap };

/// A catalog file holding `fit.workload`: the base entry's cost and sizes ("as catalog entry
/// NAME"), the fitted statistics and, when the runs measured it, the fitted
/// gradient_statistic_noise, each commented "fitted: FILE, residual ...".
std::string fitted_workload_yaml(const DynamicsFit& fit, const EstimatorNoiseFit& noise,
                                 const RunsFile& runs, const std::string& base_name,
                                 CatalogLayout layout);

}  // namespace dynamix
