// Report checks, conversion to the environment's window metrics, and greedy decisions.
#include "adapter/server/arbitrator.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <numeric>
#include <sstream>

#include "gym/batch_size_env.h"
#include "policies/export/policy_metadata.h"
#include "sim/io/input_error.h"
#include "sim/training/dynamics.h"

namespace dynamix {
namespace {

namespace pb = ::google::protobuf;

std::string number_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

/// Every double field of `message` finite, and non-negative unless named in `signed_fields`.
void check_numbers(const pb::Message& message, const std::string& where,
                   std::initializer_list<std::string_view> signed_fields = {}) {
  const pb::Descriptor* descriptor = message.GetDescriptor();
  const pb::Reflection* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const pb::FieldDescriptor* field = descriptor->field(i);
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_DOUBLE || field->is_repeated()) continue;
    const double value = reflection->GetDouble(message, field);
    const bool may_be_negative =
        std::find(signed_fields.begin(), signed_fields.end(), field->name()) != signed_fields.end();
    if (std::isfinite(value) && (may_be_negative || value >= 0)) continue;
    throw ReportError(where + field->name() + ": expected a finite number" +
                      (may_be_negative ? "" : " >= 0") + ", found " + number_text(value));
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
  if (report.window_index() < 0 || report.iteration() < 0) {
    throw ReportError("window_index, iteration: expected integers >= 0, found " +
                      std::to_string(report.window_index()) + ", " +
                      std::to_string(report.iteration()));
  }
  to_lr_rule(report.lr_rule());
  if (!(report.reference_batch() >= 1) || !std::isfinite(report.reference_batch())) {
    throw ReportError("reference_batch: expected a finite number >= 1, found " +
                      number_text(report.reference_batch()));
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
  if (metrics.iterations() < 1) {
    throw ReportError("metrics.iterations: expected an integer >= 1, found " +
                      std::to_string(metrics.iterations()));
  }
  check_numbers(metrics, "metrics.", {"train_accuracy_change"});
  for (int w = 0; w < metrics.workers_size(); ++w) {
    const std::string where = "metrics.workers[" + std::to_string(w) + "].";
    const wire::WorkerWindow& worker = metrics.workers(w);
    check_text(worker.gpu_type(), where + "gpu_type", false);
    check_numbers(worker, where);
    if (!(worker.batch_size() >= 1 && worker.batch_size() <= kMaxPolicyBatch)) {
      throw ReportError(where + "batch_size: expected a number in [1, " +
                        std::to_string(kMaxPolicyBatch) + "], found " +
                        number_text(worker.batch_size()));
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

std::string sha256_of_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw PolicyFileError(file.string(), 0, "", "a readable file", "none");
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                  EVP_MD_CTX_free);
  EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr);
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    EVP_DigestUpdate(context.get(), buffer, static_cast<std::size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context.get(), digest, &length);
  std::ostringstream hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(digest[i]);
  }
  return hex.str();
}

Arbitrator::Arbitrator(const std::filesystem::path& policy, std::size_t workers)
    : policy_(policy), workers_(workers) {
  require_compatible(policy_.metadata(), builder_.schema().to_json(),
                     default_actions(policy_.metadata().action_base), policy.string());
  identity_.set_sha256(sha256_of_file(policy));
  identity_.set_format_version(policy_.metadata().version);
  identity_.set_action_base(std::string(action_base_name(policy_.metadata().action_base)));
}

void Arbitrator::decide(const wire::WindowReport& report, wire::LogRecord& record) const {
  Trace trace;
  decide(report, record, trace);
}

void Arbitrator::decide(const wire::WindowReport& report, wire::LogRecord& record,
                        Trace& trace) const {
  check_report(report, workers_);
  const PolicyMetadata& metadata = policy_.metadata();
  trace.window = to_window_metrics(report.metrics());
  builder_.build(trace.window, trace.observation);
  decide_greedy(policy_, trace.window, reported_batches(report.metrics()), trace.observation,
                metadata.min_batch, trace.greedy);
  *record.mutable_report() = report;
  record.clear_refusal();
  wire::Decision& decision = *record.mutable_decision();
  decision.Clear();
  decision.set_protocol_version(wire::PROTOCOL_VERSION_1);
  decision.set_job_id(report.job_id());
  decision.set_window_index(report.window_index());
  std::int64_t global = 0;
  for (int w = 0; w < report.metrics().workers_size(); ++w) {
    const wire::WorkerWindow& worker = report.metrics().workers(w);
    int& batch = trace.greedy.batches[static_cast<std::size_t>(w)];
    batch = std::min(
        std::clamp(batch, metadata.min_batch, metadata.max_batch),
        memory_cap(static_cast<int>(std::lround(worker.batch_size())), worker.memory_util()));
    decision.add_batches(batch);
    global += batch;
  }
  decision.set_global_batch(global);
  decision.set_lr_factor(lr_factor(to_lr_rule(report.lr_rule()), static_cast<double>(global),
                                   report.reference_batch(), trace.window));
  decision.set_apply_at_iteration(report.iteration());
  *decision.mutable_policy() = identity_;
  record.mutable_logits()->Assign(trace.greedy.logits.begin(), trace.greedy.logits.end());
}

}  // namespace dynamix
