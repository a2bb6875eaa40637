// One calibration, as `dynamix calibrate` runs it and tests/calibration checks it: the measured
// device, the knobs fitted on the fit subset, and every configuration simulated with them.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/calibration/fidelity.h"
#include "sim/calibration/fit.h"

namespace dynamix {

struct Calibration {
  /// The model with the device's measured time points among its overrides.
  ClusterModel model;
  /// Configurations the knobs were fitted on.
  std::size_t fitted_configurations = 0;
  FitResult fit;
  /// Every measured configuration, simulated with the fitted knobs.
  std::vector<FidelityRow> rows;
};

/// Sets `device`'s time_points from the single-rank compute rows (when there are any), fits
/// `knobs` on the all-reduce and iteration rows of `subset`, and compares every row. An
/// InputError when the subset holds no such row.
Calibration calibrate(ClusterModel model, const MeasurementFile& measured, const FitSubset& subset,
                      std::span<const FitKnob> knobs, const std::string& device);

}  // namespace dynamix
