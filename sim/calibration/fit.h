// Fitting a scenario's knobs to measurements by simulating them: a deterministic Nelder-Mead
// search in log space minimizing the squared log errors of the simulated times.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "sim/calibration/cluster_model.h"
#include "sim/calibration/measurements.h"
#include "sim/calibration/nelder_mead.h"

namespace dynamix {

/// One scenario key searched over [low, high] (both > 0), starting at `initial`.
struct FitKnob {
  std::string key;
  double low = 0;
  double high = 0;
  double initial = 0;
};

/// The knobs dynamix calibrate searches unless told otherwise, for calibration/loopback.yaml
/// (`device`: the scenario device of the measured ranks): the ranks' link bandwidth, the
/// software cost of each ring step and of each collective call, the reduction's throughput, and
/// the terms of ranks sharing one machine (the device's interference κ and oversubscription
/// skew σ, DDP's work per bucket), which only DDP iterations show. Framing and transport
/// efficiency only scale the bandwidth (degenerate with it), so they stay at their defaults.
std::vector<std::string> default_fit_knobs(const std::string& device);

/// Parses "KEY=LOW:HIGH[:INITIAL]" (INITIAL defaults to the geometric mean of the bounds); an
/// InputError naming `option` otherwise.
FitKnob parse_fit_knob(const std::string& text, const std::string& option);

struct FitResult {
  /// One per knob, in the order given.
  std::vector<double> values;
  /// The knob values as overrides, ready for simulate_configurations.
  std::vector<std::string> overrides;
  /// Root mean square of the log errors over the fitted times.
  double rms_log_error = 0;
  int evaluations = 0;
};

/// One line for each knob whose fitted value sits at a bound of its search (within 1% of the
/// range, in log space): the search stopped there, not at an optimum, so the range, or the model,
/// is wrong. Empty when every value lies inside.
std::vector<std::string> knobs_at_bounds(std::span<const FitKnob> knobs,
                                         std::span<const double> values);

/// The log errors the fit minimizes for one configuration: total time, and communication too
/// where an iteration's communication was measured.
std::vector<double> log_errors(const Measurement& measured, const SimulatedTimes& simulated);

/// Searches the knobs to minimize the mean squared log error of `rows` simulated with `model`.
FitResult fit_knobs(const ClusterModel& model, std::span<const Measurement> rows,
                    std::span<const FitKnob> knobs, const NelderMeadOptions& options = {});

}  // namespace dynamix
