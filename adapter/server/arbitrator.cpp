// Report checks, conversion to the environment's window metrics, and greedy decisions.
#include "adapter/server/arbitrator.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <limits>
#include <numeric>
#include <span>
#include <sstream>

#include "gym/batch_size_env.h"
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
  if (report.window_index() < 0 || report.iteration() < 0) {
    throw ReportError("window_index, iteration: expected integers >= 0, found " +
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

namespace {

std::string hex_digest(const unsigned char* digest, unsigned int length) {
  std::ostringstream hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(digest[i]);
  }
  return hex.str();
}

/// Policy archives are a few hundred kB; anything far larger is refused before it is read.
constexpr std::uintmax_t kMaxPolicyBytes = 64ull << 20;

std::string read_policy_bytes(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    throw PolicyFileError(file.string(), 0, "", "a TorchScript policy file", "no such file");
  }
  if (std::filesystem::file_size(file, error) > kMaxPolicyBytes) {
    throw PolicyFileError(file.string(), 0, "", "a policy file of at most 64 MiB",
                          std::to_string(std::filesystem::file_size(file, error)) + " bytes");
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) throw PolicyFileError(file.string(), 0, "", "a readable file", "a read error");
  return std::move(bytes).str();
}

/// `hex` in lower case; InputError naming --policy-sha256 unless it is 64 hexadecimal digits.
std::string checked_sha256(std::string hex) {
  std::transform(hex.begin(), hex.end(), hex.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (hex.size() != 64 || !std::all_of(hex.begin(), hex.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      })) {
    throw InputError("--policy-sha256", 0, "", "64 hexadecimal digits", "'" + excerpt(hex) + "'");
  }
  return hex;
}

wire::PolicyIdentity pinned_identity(const std::string& bytes, const std::filesystem::path& file,
                                     std::string pin) {
  if (!pin.empty()) pin = checked_sha256(pin);
  wire::PolicyIdentity identity;
  identity.set_sha256(sha256_of(bytes));
  if (!pin.empty() && identity.sha256() != pin) {
    throw PolicyFileError(file.string(), 0, "", "the file --policy-sha256 pins (" + pin + ")",
                          "a file of sha256 " + identity.sha256());
  }
  return identity;
}

TorchScriptPolicy load_policy(const std::string& bytes, const std::filesystem::path& file) {
  std::istringstream archive(bytes);
  return TorchScriptPolicy(archive, file);
}

void check_bound(double value, const char* option) {
  if (!(value >= 1 && std::isfinite(value))) {
    throw InputError(option, 0, "", "a finite number >= 1", number_text(value));
  }
}

}  // namespace

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

std::vector<int> bound_global_change(std::vector<int> batches, std::int64_t reported, double change,
                                     const std::vector<int>& caps) {
  const double total = std::accumulate(batches.begin(), batches.end(), 0.0);
  const double target = std::clamp(total, static_cast<double>(reported) / change,
                                   static_cast<double>(reported) * change);
  if (target == total) return batches;
  const double scale = target / total;
  for (std::size_t w = 0; w < batches.size(); ++w) {
    const double scaled =
        scale > 1 ? std::ceil(batches[w] * scale) : std::floor(batches[w] * scale);
    batches[w] = static_cast<int>(std::clamp(scaled, 1.0, static_cast<double>(caps[w])));
  }
  return batches;
}

double bound_lr_factor(double factor, double previous, const GuardRails& rails) {
  const double bounded =
      std::clamp(factor, previous / rails.max_lr_change, previous * rails.max_lr_change);
  return std::min(bounded, rails.max_lr_factor);
}

std::string sha256_of(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return hex_digest(digest, length);
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
  return hex_digest(digest, length);
}

Arbitrator::Arbitrator(const std::filesystem::path& policy, const ArbitratorOptions& options)
    : Arbitrator(read_policy_bytes(policy), policy, options) {}

Arbitrator::Arbitrator(std::string bytes, const std::filesystem::path& policy,
                       const ArbitratorOptions& options)
    : identity_(pinned_identity(bytes, policy, options.policy_sha256)),
      policy_(load_policy(bytes, policy)),
      options_(options) {
  check_guard_rails(options_.guard_rails);
  require_compatible(policy_->metadata(), builder_.schema().to_json(),
                     default_actions(policy_->metadata().action_base), policy.string());
  identity_.set_format_version(policy_->metadata().version);
  identity_.set_action_base(std::string(action_base_name(policy_->metadata().action_base)));
}

Arbitrator::Arbitrator(std::unique_ptr<Policy> rule, const std::string& spec,
                       const ArbitratorOptions& options, const EnvOptions& env_options)
    : rule_(std::move(rule)), env_options_(env_options), options_(options) {
  check_guard_rails(options_.guard_rails);
  if (!options_.policy_sha256.empty()) {
    throw InputError("--policy-sha256", 0, "", "a policy.pt file to pin",
                     "the policy '" + spec + "', which is dynamix's own code");
  }
  identity_.set_spec(spec);
}

std::size_t Arbitrator::actions() const { return policy_ ? policy_->metadata().actions.size() : 0; }

wire::WindowReport Arbitrator::sample_report(std::size_t workers) {
  WindowMetrics window{.iterations = 10,
                       .time_s = 10,
                       .iteration_s = 0.1,
                       .train_loss = 1,
                       .train_accuracy = 0.5,
                       .validation_accuracy = 0.5,
                       .progress = 0.1,
                       .epochs = 0.1,
                       .workers = {}};
  window.workers.assign(workers, {.gpu_type = "warm-up",
                                  .batch_size = 64,
                                  .compute_s = 0.08,
                                  .comm_s = 0.01,
                                  .wait_s = 0.01,
                                  .throughput_gbps = 1,
                                  .cpu_time_ratio = 0.1,
                                  .memory_util = 0.5,
                                  .samples_per_s = 800,
                                  .grad_std_norm = 1,
                                  .grad_var_norm = 1});
  wire::WindowReport report;
  report.set_protocol_version(wire::PROTOCOL_VERSION_1);
  report.set_job_id("warm-up");
  report.set_iteration(window.iterations);
  *report.mutable_metrics() = to_wire_metrics(window);
  report.set_lr_rule(wire::LR_RULE_LINEAR);
  report.set_reference_batch(64.0 * static_cast<double>(workers));
  return report;
}

void Arbitrator::decide(const wire::WindowReport& report, wire::LogRecord& record) const {
  Trace trace;
  decide(report, record, trace);
}

void Arbitrator::ask_policy(const wire::WindowReport& report, std::span<const int> reported,
                            std::span<const int> caps, Trace& trace) const {
  if (policy_) {
    decide_greedy(*policy_, trace.window, reported, trace.observation,
                  policy_->metadata().min_batch, trace.greedy);
    return;
  }
  const DecisionContext context{.options = env_options_,
                                .window = trace.window,
                                .batches = reported,
                                .max_batches = caps,
                                .reference_batch = report.reference_batch(),
                                .epochs = report.metrics().epochs()};
  if (!begun_) rule_->begin_episode(context);
  trace.greedy.batches = rule_->decide(context, trace.observation);
  trace.greedy.logits.clear();
  trace.greedy.actions.clear();
  DYNAMIX_CHECK(trace.greedy.batches.size() == reported.size(),
                rule_->name() << " gave " << trace.greedy.batches.size() << " batches for "
                              << reported.size() << " workers");
}

void Arbitrator::decide(const wire::WindowReport& report, wire::LogRecord& record, Trace& trace,
                        const GuardRails* given_rails) const {
  check_report(report, options_.workers);
  trace.window = to_window_metrics(report.metrics());
  builder_.build(trace.window, trace.observation);
  const std::vector<int> reported = reported_batches(report.metrics());
  const int min_batch = policy_ ? policy_->metadata().min_batch : env_options_.min_batch;
  const int max_batch = policy_ ? policy_->metadata().max_batch : env_options_.max_batch;
  std::vector<int> caps(reported.size());
  for (std::size_t w = 0; w < caps.size(); ++w) {
    const int w_index = static_cast<int>(w);
    const int declared = w_index < report.max_batches_size() && report.max_batches(w_index) > 0
                             ? report.max_batches(w_index)
                             : max_batch;
    caps[w] = std::min({max_batch, declared,
                        memory_cap(reported[w], report.metrics().workers(w_index).memory_util())});
  }
  ask_policy(report, reported, caps, trace);
  if (!std::all_of(trace.greedy.logits.begin(), trace.greedy.logits.end(),
                   [](float logit) { return std::isfinite(logit); })) {
    throw PolicyOutputError("the policy's logits are not all finite");
  }
  for (std::size_t w = 0; w < caps.size(); ++w) {
    int& batch = trace.greedy.batches[w];
    batch = std::min(std::max(batch, min_batch), caps[w]);
  }
  *record.mutable_report() = report;
  record.clear_refusal();
  record.clear_episode_start();
  if (!begun_) record.set_episode_start(true);
  begun_ = true;
  wire::Decision& decision = *record.mutable_decision();
  decision.Clear();
  decision.set_protocol_version(wire::PROTOCOL_VERSION_1);
  decision.set_job_id(report.job_id());
  decision.set_window_index(report.window_index());
  const GuardRails& rails = given_rails ? *given_rails : options_.guard_rails;
  trace.greedy.batches =
      bound_global_change(std::move(trace.greedy.batches),
                          std::accumulate(reported.begin(), reported.end(), std::int64_t{0}),
                          rails.max_batch_change, caps);
  const std::int64_t global =
      std::accumulate(trace.greedy.batches.begin(), trace.greedy.batches.end(), std::int64_t{0});
  decision.mutable_batches()->Assign(trace.greedy.batches.begin(), trace.greedy.batches.end());
  decision.set_global_batch(global);
  const double factor =
      bound_lr_factor(lr_factor(to_lr_rule(report.lr_rule()), static_cast<double>(global),
                                report.reference_batch(), trace.window),
                      report.has_lr_factor() ? report.lr_factor() : 1.0, rails);
  if (!std::isfinite(factor)) {
    throw ReportError("the decision's lr_factor is not finite (" + number_text(factor) +
                      "): the report's gradient statistics or reference_batch are out of reach");
  }
  decision.set_lr_factor(factor);
  decision.set_apply_at_iteration(report.iteration() + report.metrics().iterations());
  *decision.mutable_policy() = identity_;
  record.mutable_logits()->Assign(trace.greedy.logits.begin(), trace.greedy.logits.end());
  *record.mutable_guard_rails() = to_wire(rails);
}

}  // namespace dynamix
