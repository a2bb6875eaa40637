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
  /// Rank counts of all-reduce and iteration rows; empty: every rank count.
  std::set<int> ranks;
  /// All-reduce message sizes; empty: every size.
  std::set<double> message_bytes;
  /// Per-rank batches of iteration rows; empty: every batch.
  std::set<int> batches;

  bool contains(const Measurement& measurement) const;
};

/// The documented split of docs/calibration.md: the knobs are fitted on all-reduces of the
/// powers of 4 from 64 KiB to 64 MiB at every rank count and on DDP iterations at the smallest
/// and largest measured batch; the powers of 2 between them and the iterations at the batches
/// between are held out. Single-rank compute rows are the device's time points (in-sample).
inline constexpr const char* kDefaultFitKinds = "allreduce,iteration,compute";
inline constexpr const char* kDefaultFitSizes = "65536,262144,1048576,4194304,16777216,67108864";
/// The smallest and largest batch scripts/measure_cluster.py runs DDP iterations at.
inline constexpr const char* kDefaultFitBatches = "16,128";

/// A fit subset from comma-separated kinds (allreduce, iteration, compute), rank counts, message
/// sizes and per-rank batches (empty: all); an InputError naming --fit-kinds, --fit-ranks,
/// --fit-sizes or --fit-batches.
FitSubset parse_fit_subset(const std::string& kinds, const std::string& ranks,
                           const std::string& sizes, const std::string& batches = "");

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
