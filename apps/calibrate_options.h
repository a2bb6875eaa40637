// What `dynamix calibrate`, `calibrate --dynamics` and `fidelity` take on their command lines,
// declared in knob tables (the cluster model's rows once, for calibrate and fidelity both).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dynamix_config.h"
#include "sim/calibration/fidelity.h"
#include "sim/io/knobs.h"

namespace dynamix {

/// The cluster model and the fit subset, which calibrate and fidelity share.
struct ModelOptions {
  std::string scenario = "embedded:/calibration/loopback.yaml";
  std::vector<std::string> overrides;
  std::string ranks_key = "topology.nodes.0.count";
  std::string measured;
  std::string fit_kinds = kDefaultFitKinds;
  std::string fit_ranks;
  std::string fit_sizes = kDefaultFitSizes;
  std::string fit_batches = kDefaultFitBatches;
};

/// Everything `dynamix calibrate` (of a cluster) takes.
struct CalibrateOptions {
  ModelOptions model;
  std::vector<std::string> fit;
  std::string device = "cpu-rank";
  std::string python = DYNAMIX_PYTHON;
  std::string measure_options;
  std::string out;
};

const KnobTable<CalibrateOptions>& calibrate_knobs();

/// Everything `dynamix fidelity` takes.
struct FidelityOptions {
  ModelOptions model;
  /// A run directory for fidelity.csv beside the printed comparison ("" for none).
  std::string out;
};

const KnobTable<FidelityOptions>& fidelity_knobs();

/// Everything `dynamix calibrate --dynamics` takes.
struct DynamicsOptions {
  std::string runs;
  std::string workload;
  std::string catalog;
  std::string fit_runs;
  std::string fit_batches;
  std::string optimizer = "sgd";
  std::optional<double> target_accuracy;
  double noise_scale_weight = 1.0;
  std::optional<double> noise_scale_estimate_ratio;
  bool fit_plateau = false;
  std::string out;
};

const KnobTable<DynamicsOptions>& dynamics_knobs();

}  // namespace dynamix
