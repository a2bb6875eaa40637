// A measured configuration simulated by the same code paths `dynamix simulate` uses: an
// all-reduce through the Synchronizer over the Network, an iteration through TrainingRun.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sim/calibration/measurements.h"

namespace dynamix {

class Diagnostics;

/// The scenario that describes the measured cluster, and how a configuration maps onto it.
struct ClusterModel {
  /// Scenario file (or "embedded:/..."); its topology holds the largest rank count measured.
  std::string scenario;
  /// "dotted.key=value" overrides applied first (the user's --set).
  std::vector<std::string> overrides;
  /// The key that sets the number of ranks of a configuration.
  std::string ranks_key = "topology.nodes.0.count";
};

struct SimulatedTimes {
  double compute_s = 0;
  double comm_s = 0;
  double total_s = 0;
};

/// Simulates each measured configuration with `extra` overrides applied after the model's own
/// (the knob values being fitted). Variability is switched off: measurements are medians and
/// the comparison is with the noise-free model. Each distinct rank count loads the scenario
/// once, without plausibility warnings (check_model gives them). An InputError when a configuration
/// does not fit the scenario (a batch over a rank's memory, a rank count the topology cannot take).
std::vector<SimulatedTimes> simulate_configurations(const ClusterModel& model,
                                                    std::span<const Measurement> rows,
                                                    std::span<const std::string> extra = {});

/// Loads the model's scenario with its overrides once, for `diagnostics` to hear of its
/// implausible values (which simulate_configurations does not report).
void check_model(const ClusterModel& model, Diagnostics& diagnostics);

/// The measured single-rank compute sweep (kind compute, one rank) as the override
/// "devices.DEVICE.time_points=[[batch, seconds], ...]", batches increasing; nullopt without such
/// rows.
std::optional<std::string> device_time_points(std::span<const Measurement> rows,
                                              const std::string& device);

/// "key=value" with the value printed to full precision.
std::string override_text(const std::string& key, double value);

}  // namespace dynamix
