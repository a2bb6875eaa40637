// Window metrics: folding simulated iterations into windows, and estimates read from a window.
#include "gym/window_metrics.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "sim/core/check.h"

namespace dynamix {
namespace {

double ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0;
}

}  // namespace

WindowAccumulator::WindowAccumulator(const TrainingRun& run, double segment_bytes)
    : segment_bytes_(segment_bytes) {
  DYNAMIX_CHECK(segment_bytes > 0, "segment size " << segment_bytes);
  const std::size_t p = run.workers();
  sums_.workers.resize(p);
  for (std::size_t w = 0; w < p; ++w) sums_.workers[w].gpu_type = run.node(w).gpu;
  retransmits_.assign(p, 0);
  bytes_sent_.assign(p, 0);
  present_.assign(p, 0);
}

void WindowAccumulator::add(const IterationRecord& record) {
  const std::size_t p = sums_.workers.size();
  DYNAMIX_CHECK(record.workers.size() == p,
                "record of " << record.workers.size() << " workers in a window of " << p);
  ++iterations_;
  sums_.time_s = to_seconds(record.end);
  sums_.iteration_s += to_seconds(record.end - record.start);
  sums_.train_loss += record.training.train_loss;
  sums_.train_accuracy += record.training.train_accuracy;
  sums_.epochs = record.training.epoch;
  for (std::size_t w = 0; w < p; ++w) {
    const WorkerIteration& row = record.workers[w];
    if (!row.present) continue;
    ++present_[w];
    WorkerWindow& sum = sums_.workers[w];
    sum.batch_size += row.batch_size;
    sum.compute_s += row.compute_s;
    sum.comm_s += row.comm_s;
    sum.wait_s += row.wait_s;
    sum.cpu_time_ratio += row.cpu_time_ratio;
    sum.memory_util += row.memory_util;
    sum.grad_std_norm += row.grad_std_norm;
    sum.grad_var_norm += row.grad_var_norm;
    bytes_sent_[w] += row.bytes_sent;
    retransmits_[w] += row.retransmits;
  }
}

WindowMetrics WindowAccumulator::finish(double previous_train_accuracy, double validation_accuracy,
                                        double progress) {
  WindowMetrics window;
  finish(previous_train_accuracy, validation_accuracy, progress, window);
  return window;
}

void WindowAccumulator::finish(double previous_train_accuracy, double validation_accuracy,
                               double progress, WindowMetrics& out) {
  const std::size_t p = sums_.workers.size();
  const double n = static_cast<double>(iterations_);
  const double mean = iterations_ > 0 ? 1.0 / n : 0.0;
  out.iterations = iterations_;
  out.time_s = sums_.time_s;
  out.iteration_s = sums_.iteration_s * mean;
  out.train_loss = sums_.train_loss * mean;
  out.train_accuracy = sums_.train_accuracy * mean;
  out.train_accuracy_change = out.train_accuracy - previous_train_accuracy;
  out.validation_accuracy = validation_accuracy;
  out.progress = progress;
  out.epochs = sums_.epochs;
  out.workers.resize(p);
  for (std::size_t w = 0; w < p; ++w) {
    // A worker preempted for part of the window: means over the iterations it ran.
    const double worker_mean = present_[w] > 0 ? 1.0 / static_cast<double>(present_[w]) : 0.0;
    WorkerWindow& sum = sums_.workers[w];
    WorkerWindow& worker = out.workers[w];
    worker.gpu_type = sum.gpu_type;
    worker.batch_size = sum.batch_size * worker_mean;
    worker.compute_s = sum.compute_s * worker_mean;
    worker.comm_s = sum.comm_s * worker_mean;
    worker.wait_s = sum.wait_s * worker_mean;
    worker.throughput_gbps = ratio(bytes_sent_[w] * 8e-9, sum.comm_s);
    worker.retransmit_rate = ratio(retransmits_[w], bytes_sent_[w] / segment_bytes_);
    worker.cpu_time_ratio = sum.cpu_time_ratio * worker_mean;
    worker.memory_util = sum.memory_util * worker_mean;
    worker.samples_per_s = ratio(sum.batch_size, sum.compute_s);
    worker.grad_std_norm = sum.grad_std_norm * worker_mean;
    worker.grad_var_norm = sum.grad_var_norm * worker_mean;
    std::string gpu_type = std::move(sum.gpu_type);
    sum = WorkerWindow{};
    sum.gpu_type = std::move(gpu_type);
    bytes_sent_[w] = 0;
    retransmits_[w] = 0;
    present_[w] = 0;
  }
  iterations_ = 0;
  sums_.time_s = 0;
  sums_.iteration_s = 0;
  sums_.train_loss = 0;
  sums_.train_accuracy = 0;
  sums_.epochs = 0;
}

double measured_noise_scale(const WindowMetrics& window) {
  double sum = 0;
  for (const WorkerWindow& worker : window.workers) sum += worker.grad_var_norm * worker.batch_size;
  return window.workers.empty() ? 0 : sum / static_cast<double>(window.workers.size());
}

void SmoothedNoiseScale::reset() { *this = SmoothedNoiseScale(); }

double SmoothedNoiseScale::update(const WindowMetrics& window) {
  const double noise = measured_noise_scale(window);
  double global = 0;
  for (const WorkerWindow& worker : window.workers) global += worker.batch_size;
  if (noise > 0 && std::isfinite(noise) && global > 0) {
    if (first_global_batch_ == 0) first_global_batch_ = global;
    const double steps = static_cast<double>(std::max<std::int64_t>(window.iterations, 1));
    const double keep = std::pow(kSmoothing, steps * global / first_global_batch_);
    biased_ = keep * biased_ + (1 - keep) * noise;
    weight_ = keep * weight_ + (1 - keep);
  }
  return weight_ > 0 ? biased_ / weight_ : 0;
}

namespace {

/// The one-window goodput model: T(G) = G/S + c, statistical efficiency ∝ 1/(B_noise + G).
struct WindowGoodput {
  double noise_scale = 0;
  double overhead_s = 0;
  double speed = 0;
  double global_batch = 0;

  double optimum() const { return std::sqrt(noise_scale * overhead_s * speed); }
  double goodput(double global) const {
    return global / ((global / speed + overhead_s) * (noise_scale + global));
  }
};

/// The window's model, or nullopt when it lacks workers, a speed, a noise scale or an overhead.
std::optional<WindowGoodput> window_goodput(const WindowMetrics& window, double noise) {
  if (window.workers.empty()) return std::nullopt;
  double global = 0, speed = 0;
  for (const WorkerWindow& worker : window.workers) {
    if (!(worker.samples_per_s > 0) || !std::isfinite(worker.samples_per_s)) return std::nullopt;
    global += worker.batch_size;
    speed += worker.samples_per_s;
  }
  const WindowGoodput model{.noise_scale = noise,
                            .overhead_s = window.iteration_s - global / speed,
                            .speed = speed,
                            .global_batch = global};
  const double optimum = model.optimum();
  if (!(noise > 0) || !(model.overhead_s > 0) || !std::isfinite(optimum) || !(optimum > 0)) {
    return std::nullopt;
  }
  return model;
}

}  // namespace

double goodput_optimal_batch(const WindowMetrics& window) {
  const std::optional<WindowGoodput> model = window_goodput(window, measured_noise_scale(window));
  return model ? model->optimum() : 0;
}

bool goodput_within(const WindowMetrics& window, double tolerance) {
  const std::optional<WindowGoodput> model = window_goodput(window, measured_noise_scale(window));
  if (!model || !(model->global_batch > 0)) return false;
  return (1 + tolerance) * model->goodput(model->global_batch) >= model->goodput(model->optimum());
}

}  // namespace dynamix
