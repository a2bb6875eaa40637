// Knob fitting.
#include "sim/calibration/fit.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/core/check.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"

namespace dynamix {
namespace {

double parse_positive(std::string_view text, const std::string& option, const std::string& whole) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() ||
      !std::isfinite(value) || value <= 0) {
    throw InputError(option, 0, "", "KEY=LOW:HIGH[:INITIAL] with positive numbers", excerpt(whole));
  }
  return value;
}

std::vector<std::string> overrides_for(std::span<const FitKnob> knobs,
                                       std::span<const double> values) {
  std::vector<std::string> overrides;
  for (std::size_t i = 0; i < knobs.size(); ++i)
    overrides.push_back(override_text(knobs[i].key, values[i]));
  return overrides;
}

/// Log-space coordinates clamped into the knobs' bounds.
std::vector<double> knob_values(std::span<const FitKnob> knobs, std::span<const double> x) {
  std::vector<double> values;
  for (std::size_t i = 0; i < knobs.size(); ++i) {
    values.push_back(std::exp(std::clamp(x[i], std::log(knobs[i].low), std::log(knobs[i].high))));
  }
  return values;
}

double mean_square(const ClusterModel& model, std::span<const Measurement> rows,
                   const std::vector<std::string>& overrides) {
  const auto simulated = simulate_configurations(model, rows, overrides);
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (double e : log_errors(rows[i], simulated[i])) {
      sum += e * e;
      ++count;
    }
  }
  return count == 0 ? 0 : sum / static_cast<double>(count);
}

}  // namespace

std::vector<std::string> default_fit_knobs(const std::string& device) {
  return {"topology.nodes.0.link.bandwidth_gbps=0.01:1000:10",
          "sync.message_overhead_us=0.1:100000:50",
          "sync.call_overhead_us=0.1:100000:50",
          "sync.reduction_gbps=0.01:10000:20",
          "devices." + device + ".colocation_slowdown=0.001:2:0.1",
          "sync.bucket_overhead_us=0.1:10000:300",
          "devices." + device + ".oversubscription_skew=0.01:0.99:0.5"};
}

FitKnob parse_fit_knob(const std::string& text, const std::string& option) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw InputError(option, 0, "", "KEY=LOW:HIGH[:INITIAL]", excerpt(text));
  }
  FitKnob knob{.key = text.substr(0, equals)};
  std::vector<double> numbers;
  std::string_view rest = std::string_view(text).substr(equals + 1);
  while (true) {
    const auto colon = rest.find(':');
    numbers.push_back(parse_positive(rest.substr(0, colon), option, text));
    if (colon == std::string_view::npos) break;
    rest = rest.substr(colon + 1);
  }
  if (numbers.size() < 2 || numbers.size() > 3 || numbers[0] >= numbers[1] ||
      (numbers.size() == 3 && (numbers[2] < numbers[0] || numbers[2] > numbers[1]))) {
    throw InputError(option, 0, knob.key, "LOW < HIGH and LOW <= INITIAL <= HIGH", excerpt(text));
  }
  knob.low = numbers[0];
  knob.high = numbers[1];
  knob.initial = numbers.size() == 3 ? numbers[2] : std::sqrt(numbers[0] * numbers[1]);
  return knob;
}

std::vector<std::string> knobs_at_bounds(std::span<const FitKnob> knobs,
                                         std::span<const double> values) {
  DYNAMIX_CHECK(knobs.size() == values.size(), knobs.size()
                                                   << " knobs, " << values.size() << " values");
  std::vector<std::string> lines;
  for (std::size_t k = 0; k < knobs.size(); ++k) {
    const FitKnob& knob = knobs[k];
    const double margin = 0.01 * std::log(knob.high / knob.low);
    const bool low = std::log(values[k] / knob.low) <= margin;
    const bool high = std::log(knob.high / values[k]) <= margin;
    if (!low && !high) continue;
    lines.push_back(knob.key + " = " + format_number(values[k]) + " sits at the " +
                    (low ? "lower" : "upper") + " bound of its search [" + format_number(knob.low) +
                    ", " + format_number(knob.high) +
                    "]: the fit stopped there, not at an optimum (widen --fit " + knob.key +
                    "=LOW:HIGH, or the model lacks a term)");
  }
  return lines;
}

std::vector<double> log_errors(const Measurement& measured, const SimulatedTimes& simulated) {
  const auto log_ratio = [](double s, double m) { return std::log(std::max(s, 1e-12) / m); };
  std::vector<double> errors{log_ratio(simulated.total_s, measured.total_s)};
  if (measured.kind == MeasurementKind::kIteration && measured.comm_s && *measured.comm_s > 0)
    errors.push_back(log_ratio(simulated.comm_s, *measured.comm_s));
  return errors;
}

FitResult fit_knobs(const ClusterModel& model, std::span<const Measurement> rows,
                    std::span<const FitKnob> knobs, const NelderMeadOptions& options) {
  DYNAMIX_CHECK(!knobs.empty() && !rows.empty(), "a fit needs knobs and measurements");
  std::vector<double> x0;
  for (const FitKnob& knob : knobs) x0.push_back(std::log(knob.initial));
  const auto objective = [&](std::span<const double> x) {
    return mean_square(model, rows, overrides_for(knobs, knob_values(knobs, x)));
  };
  const NelderMeadResult best = nelder_mead(objective, x0, options);
  FitResult result;
  result.values = knob_values(knobs, best.x);
  result.overrides = overrides_for(knobs, result.values);
  result.rms_log_error = std::sqrt(best.value);
  result.evaluations = best.evaluations;
  return result;
}

}  // namespace dynamix
