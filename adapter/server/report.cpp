// Report checks, conversion to the environment's window metrics, and the bounds of a decision.
#include "adapter/server/report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <numeric>
#include <sstream>

#include "gym/env_knobs.h"
#include "policies/export/policy_metadata.h"
#include "sim/core/check.h"
#include "sim/io/input_error.h"
#include "sim/training/dynamics.h"

namespace dynamix {
namespace {

namespace pb = ::google::protobuf;

std::string number_text(double value) {
  std::ostringstream text;
  text << std::setprecision(12) << value;
  return text.str();
}

/// The range of one double field of the protocol.
struct Range {
  std::string_view field;
  double low;
  double high;
};

// Upper bounds far beyond any real job, low enough that every product a decision forms (noise
// scale times batch, goodput terms) stays finite.
constexpr double kMaxSeconds = 1e6;
constexpr double kMaxMagnitude = 1e12;
constexpr Range kWindowRanges[] = {
    {"time_s", 0, 1e9},
    {"iteration_s", 0, kMaxSeconds},
    {"train_loss", -1e9, 1e9},
    {"train_accuracy", 0, 1},
    {"train_accuracy_change", -1, 1},
    {"validation_accuracy", 0, 1},
    {"progress", 0, 1},
    {"epochs", 0, 1e9},
    {"epoch_budget_used", 0, 1},
    {"time_budget_used", 0, 1},
    {"target_progress", 0, 1},
};
constexpr Range kWorkerRanges[] = {
    {"batch_size", 1, kMaxPolicyBatch},
    {"compute_s", 0, kMaxSeconds},
    {"comm_s", 0, kMaxSeconds},
    {"wait_s", 0, kMaxSeconds},
    {"throughput_gbps", 0, 1e6},
    {"retransmit_rate", 0, 1},
    {"cpu_time_ratio", 0, 1},
    {"memory_util", 0, 1},
    {"samples_per_s", 0, kMaxMagnitude},
    {"grad_std_norm", 0, kMaxMagnitude},
    {"grad_var_norm", 0, kMaxMagnitude},
    {"leaving_in_s", 0, kMaxNoticeSeconds},
};

/// Every double field of `message` within its range in `ranges`.
void check_numbers(const pb::Message& message, const std::string& where,
                   std::span<const Range> ranges) {
  const pb::Descriptor* descriptor = message.GetDescriptor();
  const pb::Reflection* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const pb::FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_DOUBLE || field->is_repeated()) continue;
    const auto range = std::find_if(ranges.begin(), ranges.end(),
                                    [&](const Range& r) { return r.field == field->name(); });
    DYNAMIX_CHECK(range != ranges.end(), "no range for " << field->full_name());
    const double value = reflection->GetDouble(message, field);
    if (value >= range->low && value <= range->high) continue;
    throw ReportError(where + field->name() + ": expected a number in [" + number_text(range->low) +
                      ", " + number_text(range->high) + "], found " + number_text(value));
  }
}

void check_text(const std::string& text, const std::string& where, bool required) {
  if (text.size() > kMaxReportText || (required && text.empty())) {
    throw ReportError(where + ": expected 1 to " + std::to_string(kMaxReportText) +
                      " characters, found " + std::to_string(text.size()));
  }
}

void check_header(const wire::WindowReport& report) {
  if (report.protocol_version() != wire::PROTOCOL_VERSION_1) {
    throw ReportError("protocol_version: expected 1, found " +
                      std::to_string(report.protocol_version()));
  }
  check_text(report.job_id(), "job_id", true);
  // Bounded so that apply_at_iteration (iteration + metrics.iterations) cannot overflow.
  if (report.window_index() < 0 || report.iteration() < 0 ||
      report.window_index() > kMaxReportCount || report.iteration() > kMaxReportCount) {
    throw ReportError("window_index, iteration: expected integers in [0, " +
                      std::to_string(kMaxReportCount) + "], found " +
                      std::to_string(report.window_index()) + ", " +
                      std::to_string(report.iteration()));
  }
  to_lr_rule(report.lr_rule());
  if (!(report.reference_batch() >= 1 && report.reference_batch() <= kMaxMagnitude)) {
    throw ReportError("reference_batch: expected a number in [1, " + number_text(kMaxMagnitude) +
                      "], found " + number_text(report.reference_batch()));
  }
  if (report.has_lr_factor() && !(report.lr_factor() > 0 && report.lr_factor() <= kMaxMagnitude)) {
    throw ReportError("lr_factor: expected a number in (0, " + number_text(kMaxMagnitude) +
                      "], found " + number_text(report.lr_factor()));
  }
}

void check_bound(double value, const char* option) {
  if (!(value >= 1 && std::isfinite(value))) {
    throw InputError(option, 0, "", "a finite number >= 1", number_text(value));
  }
}

}  // namespace
std::size_t max_report_bytes(std::size_t workers) {
  return 4096 + workers * (kMaxReportText + 160);
}

void check_report(const wire::WindowReport& report, std::size_t workers) {
  check_header(report);
  const wire::WindowMetrics& metrics = report.metrics();
  if (static_cast<std::size_t>(metrics.workers_size()) != workers) {
    throw ReportError("metrics.workers: expected " + std::to_string(workers) +
                      " workers (dynamix serve --workers), found " +
                      std::to_string(metrics.workers_size()));
  }
  if (metrics.iterations() < 1 || metrics.iterations() > kMaxReportCount) {
    throw ReportError("metrics.iterations: expected an integer in [1, " +
                      std::to_string(kMaxReportCount) + "], found " +
                      std::to_string(metrics.iterations()));
  }
  check_numbers(metrics, "metrics.", kWindowRanges);
  for (int w = 0; w < metrics.workers_size(); ++w) {
    const std::string where = "metrics.workers[" + std::to_string(w) + "].";
    const wire::WorkerWindow& worker = metrics.workers(w);
    check_text(worker.gpu_type(), where + "gpu_type", false);
    check_numbers(worker, where, kWorkerRanges);
  }
  if (report.max_batches_size() != 0 &&
      static_cast<std::size_t>(report.max_batches_size()) != workers) {
    throw ReportError("max_batches: expected none or " + std::to_string(workers) +
                      " entries, found " + std::to_string(report.max_batches_size()));
  }
  for (int w = 0; w < report.max_batches_size(); ++w) {
    if (report.max_batches(w) < 0) {
      throw ReportError("max_batches[" + std::to_string(w) + "]: expected 0 (not declared) or a " +
                        "batch >= 1, found " + std::to_string(report.max_batches(w)));
    }
  }
}

WindowMetrics to_window_metrics(const wire::WindowMetrics& metrics) {
  WindowMetrics window;
  window.iterations = metrics.iterations();
  window.time_s = metrics.time_s();
  window.iteration_s = metrics.iteration_s();
  window.train_loss = metrics.train_loss();
  window.train_accuracy = metrics.train_accuracy();
  window.train_accuracy_change = metrics.train_accuracy_change();
  window.validation_accuracy = metrics.validation_accuracy();
  window.progress = metrics.progress();
  window.epochs = metrics.epochs();
  window.epoch_budget_used = metrics.epoch_budget_used();
  window.time_budget_used = metrics.time_budget_used();
  window.target_progress = metrics.target_progress();
  window.workers.reserve(static_cast<std::size_t>(metrics.workers_size()));
  for (const wire::WorkerWindow& worker : metrics.workers()) {
    window.workers.push_back({.gpu_type = worker.gpu_type(),
                              .batch_size = worker.batch_size(),
                              .compute_s = worker.compute_s(),
                              .comm_s = worker.comm_s(),
                              .wait_s = worker.wait_s(),
                              .throughput_gbps = worker.throughput_gbps(),
                              .retransmit_rate = worker.retransmit_rate(),
                              .cpu_time_ratio = worker.cpu_time_ratio(),
                              .memory_util = worker.memory_util(),
                              .samples_per_s = worker.samples_per_s(),
                              .grad_std_norm = worker.grad_std_norm(),
                              .grad_var_norm = worker.grad_var_norm()});
  }
  return window;
}

wire::WindowMetrics to_wire_metrics(const WindowMetrics& window) {
  wire::WindowMetrics metrics;
  metrics.set_iterations(window.iterations);
  metrics.set_time_s(window.time_s);
  metrics.set_iteration_s(window.iteration_s);
  metrics.set_train_loss(window.train_loss);
  metrics.set_train_accuracy(window.train_accuracy);
  metrics.set_train_accuracy_change(window.train_accuracy_change);
  metrics.set_validation_accuracy(window.validation_accuracy);
  metrics.set_progress(window.progress);
  metrics.set_epochs(window.epochs);
  metrics.set_epoch_budget_used(window.epoch_budget_used);
  metrics.set_time_budget_used(window.time_budget_used);
  metrics.set_target_progress(window.target_progress);
  for (const WorkerWindow& worker : window.workers) {
    wire::WorkerWindow& out = *metrics.add_workers();
    out.set_gpu_type(worker.gpu_type);
    out.set_batch_size(worker.batch_size);
    out.set_compute_s(worker.compute_s);
    out.set_comm_s(worker.comm_s);
    out.set_wait_s(worker.wait_s);
    out.set_throughput_gbps(worker.throughput_gbps);
    out.set_retransmit_rate(worker.retransmit_rate);
    out.set_cpu_time_ratio(worker.cpu_time_ratio);
    out.set_memory_util(worker.memory_util);
    out.set_samples_per_s(worker.samples_per_s);
    out.set_grad_std_norm(worker.grad_std_norm);
    out.set_grad_var_norm(worker.grad_var_norm);
  }
  return metrics;
}

std::vector<double> leaving_in_s(const wire::WindowMetrics& metrics) {
  const auto& workers = metrics.workers();
  if (std::none_of(workers.begin(), workers.end(),
                   [](const wire::WorkerWindow& worker) { return worker.has_leaving_in_s(); })) {
    return {};
  }
  std::vector<double> seconds;
  seconds.reserve(static_cast<std::size_t>(workers.size()));
  for (const wire::WorkerWindow& worker : workers) {
    seconds.push_back(worker.has_leaving_in_s() ? worker.leaving_in_s()
                                                : std::numeric_limits<double>::infinity());
  }
  return seconds;
}

EnvOptions served_options(const EnvOptions& options, const wire::WindowReport& report) {
  EnvOptions served = options;
  served.decision_interval = static_cast<int>(
      std::clamp<std::int64_t>(report.metrics().iterations(), 1, kMaxDecisionInterval));
  served.decision_lag = 1;
  return served;
}

std::vector<int> reported_batches(const wire::WindowMetrics& metrics) {
  std::vector<int> batches;
  batches.reserve(static_cast<std::size_t>(metrics.workers_size()));
  for (const wire::WorkerWindow& worker : metrics.workers()) {
    batches.push_back(static_cast<int>(std::lround(worker.batch_size())));
  }
  return batches;
}

int memory_cap(int batch, double memory_util) {
  if (!(memory_util > 0)) return std::numeric_limits<int>::max();
  const double cap = std::floor(batch * kMemoryHeadroom / memory_util);
  return static_cast<int>(
      std::clamp(cap, 1.0, static_cast<double>(std::numeric_limits<int>::max())));
}

LrRule to_lr_rule(wire::LrRule rule) {
  switch (rule) {
    case wire::LR_RULE_NONE:
      return LrRule::kNone;
    case wire::LR_RULE_LINEAR:
      return LrRule::kLinear;
    case wire::LR_RULE_SQRT:
      return LrRule::kSqrt;
    case wire::LR_RULE_ADASCALE:
      return LrRule::kAdaScale;
    default:
      throw ReportError("lr_rule: expected one of NONE, LINEAR, SQRT, ADASCALE, found " +
                        std::to_string(static_cast<int>(rule)));
  }
}

double lr_factor(LrRule rule, double global_batch, double reference_batch,
                 const WindowMetrics& window) {
  const double scale = global_batch / reference_batch;
  switch (rule) {
    case LrRule::kNone:
      return 1.0;
    case LrRule::kLinear:
      return scale;
    case LrRule::kSqrt:
      return std::sqrt(scale);
    case LrRule::kAdaScale:
      break;
  }
  double noise_scale = 0;
  for (const WorkerWindow& worker : window.workers) {
    noise_scale += worker.grad_var_norm * worker.batch_size;
  }
  noise_scale /= static_cast<double>(std::max<std::size_t>(1, window.workers.size()));
  return adascale_gain(global_batch, reference_batch, noise_scale);
}

void check_guard_rails(const GuardRails& rails) {
  check_bound(rails.max_batch_change, "--max-batch-change");
  check_bound(rails.max_lr_change, "--max-lr-change");
  check_bound(rails.max_lr_factor, "--max-lr-factor");
}

GuardRails from_wire(const wire::GuardRails& rails) {
  return {.max_batch_change = rails.max_batch_change(),
          .max_lr_change = rails.max_lr_change(),
          .max_lr_factor = rails.max_lr_factor()};
}

wire::GuardRails to_wire(const GuardRails& rails) {
  wire::GuardRails out;
  out.set_max_batch_change(rails.max_batch_change);
  out.set_max_lr_change(rails.max_lr_change);
  out.set_max_lr_factor(rails.max_lr_factor);
  return out;
}

double bound_lr_factor(double factor, double previous, const GuardRails& rails) {
  const double bounded =
      std::clamp(factor, previous / rails.max_lr_change, previous * rails.max_lr_change);
  return std::min(bounded, rails.max_lr_factor);
}

std::vector<int> batch_caps(const wire::WindowReport& report, int max_batch) {
  const std::vector<int> reported = reported_batches(report.metrics());
  std::vector<int> caps(reported.size());
  for (std::size_t w = 0; w < caps.size(); ++w) {
    const int index = static_cast<int>(w);
    const int declared = index < report.max_batches_size() && report.max_batches(index) > 0
                             ? report.max_batches(index)
                             : max_batch;
    caps[w] = std::min({max_batch, declared,
                        memory_cap(reported[w], report.metrics().workers(index).memory_util())});
  }
  return caps;
}

void bounded_decision(const wire::WindowReport& report, const WindowMetrics& window,
                      std::vector<int> batches, std::span<const int> caps, int min_batch,
                      const GuardRails& rails, wire::Decision& decision) {
  for (std::size_t w = 0; w < caps.size(); ++w) {
    batches[w] = std::min(std::max(batches[w], min_batch), caps[w]);
  }
  const std::vector<int> reported = reported_batches(report.metrics());
  batches = bound_global_change(std::move(batches),
                                std::accumulate(reported.begin(), reported.end(), std::int64_t{0}),
                                rails.max_batch_change, {caps.begin(), caps.end()});
  const std::int64_t global = std::accumulate(batches.begin(), batches.end(), std::int64_t{0});
  const double factor =
      bound_lr_factor(lr_factor(to_lr_rule(report.lr_rule()), static_cast<double>(global),
                                report.reference_batch(), window),
                      report.has_lr_factor() ? report.lr_factor() : 1.0, rails);
  if (!std::isfinite(factor)) {
    throw ReportError("the decision's lr_factor is not finite (" + number_text(factor) +
                      "): the report's gradient statistics or reference_batch are out of reach");
  }
  decision.Clear();
  decision.set_protocol_version(wire::PROTOCOL_VERSION_1);
  decision.set_job_id(report.job_id());
  decision.set_window_index(report.window_index());
  decision.mutable_batches()->Assign(batches.begin(), batches.end());
  decision.set_global_batch(global);
  decision.set_lr_factor(factor);
  decision.set_apply_at_iteration(report.iteration() + report.metrics().iterations());
}

void JobSequence::check(const wire::WindowReport& report) const {
  if (!job_.empty() && report.job_id() != job_) {
    throw SequenceError(std::string(kOutOfSequence) + "job_id: expected " + excerpt(job_) +
                        " (serve decides for one job: --job-id, or the first it answered; "
                        "start one serve per job), found " +
                        excerpt(report.job_id()));
  }
  if (decided_any_ && report.window_index() <= last_window_) {
    SequenceError error(std::string(kOutOfSequence) + "window_index: expected a window after " +
                        std::to_string(last_window_) + " (the last decided), found " +
                        std::to_string(report.window_index()) +
                        (report.window_index() == last_window_ ? " again" : ""));
    error.duplicate = report.window_index() == last_window_;
    throw error;
  }
}

void JobSequence::decided(const wire::WindowReport& report) {
  job_ = report.job_id();
  last_window_ = report.window_index();
  decided_any_ = true;
}

}  // namespace dynamix
