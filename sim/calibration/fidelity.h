// Measured against simulated times, per configuration, and how well they agree per kind of
// measurement: the median absolute relative error and Kendall's tau of the configurations.
#pragma once

#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "sim/calibration/cluster_model.h"
#include "sim/calibration/measurements.h"

namespace dynamix {

/// Which measured configurations a calibration fits; the others are held out.
struct FitSubset {
  std::set<MeasurementKind> kinds{MeasurementKind::kAllReduce};
  /// Empty: every rank count.
  std::set<int> ranks;
  /// All-reduce message sizes; empty: every size.
  std::set<double> message_bytes;

  bool contains(const Measurement& measurement) const;
};

struct FidelityRow {
  Measurement measured;
  SimulatedTimes simulated;
  bool fitted = false;
};

/// Relative errors of one time (compute, communication or total) over a set of rows.
struct ErrorSummary {
  std::size_t count = 0;
  double median_absolute_error = 0;
};

struct FidelitySummary {
  MeasurementKind kind = MeasurementKind::kAllReduce;
  std::size_t configurations = 0;
  ErrorSummary compute;
  ErrorSummary comm;
  ErrorSummary total;
  /// Rank agreement of the configurations' total times; 1 with fewer than two.
  double kendall_tau = 1;
};

/// Simulates every measured configuration; rows in `fit` are marked fitted.
std::vector<FidelityRow> compare(const ClusterModel& model, std::span<const Measurement> rows,
                                 const FitSubset& fit, std::span<const std::string> extra = {});

/// One summary per kind present among the rows with fitted == `fitted` (or all rows when
/// `fitted` is empty), in the order allreduce, iteration, compute.
std::vector<FidelitySummary> summarize(std::span<const FidelityRow> rows,
                                       std::optional<bool> fitted = std::nullopt);

}  // namespace dynamix
