// One calibration.
#include "sim/calibration/calibration.h"

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

/// The rows the knobs are fitted on: compute rows set the device's time points, which the
/// knobs cannot change.
std::vector<Measurement> knob_rows(const MeasurementFile& file, const FitSubset& subset) {
  std::vector<Measurement> rows;
  for (const Measurement& row : file.rows)
    if (subset.contains(row) && row.kind != MeasurementKind::kCompute) rows.push_back(row);
  if (rows.empty()) {
    throw InputError(file.path, 0, "",
                     "at least one all-reduce or iteration row in the fit subset (--fit-kinds, "
                     "--fit-ranks, --fit-sizes)",
                     "none");
  }
  return rows;
}

}  // namespace

Calibration calibrate(ClusterModel model, const MeasurementFile& measured, const FitSubset& subset,
                      std::span<const FitKnob> knobs, const std::string& device) {
  if (const auto points = device_time_points(measured.rows, device))
    model.overrides.push_back(*points);
  const std::vector<Measurement> rows = knob_rows(measured, subset);
  Calibration calibration;
  calibration.fitted_configurations = rows.size();
  calibration.fit = fit_knobs(model, rows, knobs);
  calibration.rows = compare(model, measured.rows, subset, calibration.fit.overrides);
  calibration.model = std::move(model);
  return calibration;
}

}  // namespace dynamix
