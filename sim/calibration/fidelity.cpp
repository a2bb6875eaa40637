// Fidelity of simulated times against measurements.
#include "sim/calibration/fidelity.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "sim/calibration/agreement.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

ErrorSummary errors_of(std::span<const FidelityRow* const> rows,
                       std::optional<double> Measurement::*measured_time,
                       double SimulatedTimes::*simulated_time) {
  std::vector<double> errors;
  for (const FidelityRow* row : rows) {
    const std::optional<double>& measured = row->measured.*measured_time;
    if (measured && *measured > 0)
      errors.push_back(relative_error(row->simulated.*simulated_time, *measured));
  }
  return {errors.size(), median_absolute(errors)};
}

FidelitySummary summary_of(MeasurementKind kind, std::span<const FidelityRow* const> rows) {
  FidelitySummary summary;
  summary.kind = kind;
  summary.configurations = rows.size();
  summary.compute = errors_of(rows, &Measurement::compute_s, &SimulatedTimes::compute_s);
  summary.comm = errors_of(rows, &Measurement::comm_s, &SimulatedTimes::comm_s);
  std::vector<double> total_errors;
  std::vector<double> measured;
  std::vector<double> simulated;
  for (const FidelityRow* row : rows) {
    total_errors.push_back(relative_error(row->simulated.total_s, row->measured.total_s));
    measured.push_back(row->measured.total_s);
    simulated.push_back(row->simulated.total_s);
  }
  summary.total = {total_errors.size(), median_absolute(total_errors)};
  summary.kendall_tau = kendall_tau(measured, simulated);
  return summary;
}

std::vector<double> parse_list(const std::string& text, const std::string& option) {
  std::vector<double> values;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    double value = 0;
    const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (item.empty() || error != std::errc{} || end != item.data() + item.size() || !(value > 0) ||
        value != std::floor(value) || value > 1e15) {
      throw InputError(option, 0, "", "a comma-separated list of whole numbers > 0", excerpt(text));
    }
    values.push_back(value);
  }
  return values;
}

MeasurementKind parse_kind(const std::string& kind) {
  if (kind == "allreduce") return MeasurementKind::kAllReduce;
  if (kind == "iteration") return MeasurementKind::kIteration;
  if (kind == "compute") return MeasurementKind::kCompute;
  throw InputError("--fit-kinds", 0, "", "allreduce, iteration or compute", excerpt(kind));
}

}  // namespace

FitSubset parse_fit_subset(const std::string& kinds, const std::string& ranks,
                           const std::string& sizes, const std::string& batches) {
  FitSubset subset;
  subset.kinds.clear();
  std::stringstream stream(kinds);
  std::string kind;
  while (std::getline(stream, kind, ',')) subset.kinds.insert(parse_kind(kind));
  for (double count : parse_list(ranks, "--fit-ranks")) {
    if (count > 1e6)
      throw InputError("--fit-ranks", 0, "", "rank counts up to 1e6", excerpt(ranks));
    subset.ranks.insert(static_cast<int>(count));
  }
  for (double bytes : parse_list(sizes, "--fit-sizes")) subset.message_bytes.insert(bytes);
  for (double batch : parse_list(batches, "--fit-batches")) {
    if (batch > 1e9)
      throw InputError("--fit-batches", 0, "", "batches up to 1e9", excerpt(batches));
    subset.batches.insert(static_cast<int>(batch));
  }
  return subset;
}

bool FitSubset::contains(const Measurement& m) const {
  if (!kinds.contains(m.kind)) return false;
  // A single-rank compute row describes the device, whatever rank counts are fitted.
  if (m.kind == MeasurementKind::kCompute) return true;
  if (!ranks.empty() && !ranks.contains(m.ranks)) return false;
  if (m.kind == MeasurementKind::kIteration)
    return batches.empty() || batches.contains(m.batch_per_rank);
  return message_bytes.empty() || message_bytes.contains(m.message_bytes);
}

std::vector<FidelityRow> compare(const ClusterModel& model, std::span<const Measurement> rows,
                                 const FitSubset& fit, std::span<const std::string> extra) {
  const std::vector<SimulatedTimes> simulated = simulate_configurations(model, rows, extra);
  std::vector<FidelityRow> compared;
  for (std::size_t i = 0; i < rows.size(); ++i)
    compared.push_back({rows[i], simulated[i], fit.contains(rows[i])});
  return compared;
}

std::vector<FidelitySummary> summarize(std::span<const FidelityRow> rows,
                                       std::optional<bool> fitted) {
  std::vector<FidelitySummary> summaries;
  for (MeasurementKind kind :
       {MeasurementKind::kAllReduce, MeasurementKind::kIteration, MeasurementKind::kCompute}) {
    std::vector<const FidelityRow*> selected;
    for (const FidelityRow& row : rows) {
      if (row.measured.kind == kind && (!fitted || row.fitted == *fitted)) selected.push_back(&row);
    }
    if (!selected.empty()) summaries.push_back(summary_of(kind, selected));
  }
  return summaries;
}

}  // namespace dynamix
