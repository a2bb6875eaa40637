// Window metrics: folding simulated iterations into windows, and the CSV form real workers write.
#include "gym/window_metrics.h"

#include <charconv>
#include <cmath>
#include <istream>
#include <ostream>
#include <string_view>

#include "sim/core/check.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

const std::vector<std::string_view> kColumns = {"window",
                                                "iterations",
                                                "time_s",
                                                "iteration_s",
                                                "train_loss",
                                                "train_accuracy",
                                                "train_accuracy_change",
                                                "validation_accuracy",
                                                "progress",
                                                "epochs",
                                                "worker",
                                                "gpu_type",
                                                "batch_size",
                                                "compute_s",
                                                "comm_s",
                                                "wait_s",
                                                "throughput_gbps",
                                                "retransmit_rate",
                                                "cpu_time_ratio",
                                                "memory_util",
                                                "samples_per_s",
                                                "grad_std_norm",
                                                "grad_var_norm"};
constexpr std::size_t kWindowFields = 10;

double ratio(double numerator, double denominator) {
  return denominator > 0 ? numerator / denominator : 0;
}

// Shortest representation that reads back to the same double, so a replayed file gives the
// same observations as the live simulator.
void write_number(std::ostream& out, double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.write(buffer, result.ptr - buffer);
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

class RowReader {
 public:
  RowReader(const std::string& source, int line, const std::vector<std::string_view>& fields)
      : source_(source), line_(line), fields_(fields) {}

  double number(std::size_t column) const {
    const std::string_view text = fields_[column];
    double value = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size() ||
        !std::isfinite(value)) {
      fail(column, "a finite number");
    }
    return value;
  }

  std::int64_t integer(std::size_t column) const {
    const std::string_view text = fields_[column];
    std::int64_t value = 0;
    const auto result = std::from_chars(text.data(), text.data() + text.size(), value);
    if (result.ec != std::errc() || result.ptr != text.data() + text.size() || value < 0) {
      fail(column, "an integer >= 0");
    }
    return value;
  }

  std::string_view text(std::size_t column) const { return fields_[column]; }

  [[noreturn]] void fail(std::size_t column, const std::string& expected) const {
    throw InputError(source_, line_, std::string(kColumns[column]), expected,
                     "'" + std::string(fields_[column]) + "'");
  }

 private:
  const std::string& source_;
  int line_;
  const std::vector<std::string_view>& fields_;
};

}  // namespace

WindowAccumulator::WindowAccumulator(const TrainingRun& run, double segment_bytes)
    : segment_bytes_(segment_bytes) {
  DYNAMIX_CHECK(segment_bytes > 0, "segment size " << segment_bytes);
  const std::size_t p = run.workers();
  sums_.workers.resize(p);
  for (std::size_t w = 0; w < p; ++w) sums_.workers[w].gpu_type = run.node(w).gpu;
  segments_.assign(p, 0);
  retransmits_.assign(p, 0);
  bytes_sent_.assign(p, 0);
}

void WindowAccumulator::add(const IterationRecord& record) {
  const std::size_t p = sums_.workers.size();
  DYNAMIX_CHECK(record.workers.size() == p,
                "record of " << record.workers.size() << " workers in a window of " << p);
  if (iterations_ == 0) window_start_s_ = to_seconds(record.start);
  ++iterations_;
  sums_.time_s = to_seconds(record.end);
  sums_.iteration_s += to_seconds(record.end - record.start);
  sums_.train_loss += record.training.train_loss;
  sums_.train_accuracy += record.training.train_accuracy;
  sums_.epochs = record.training.epoch;
  for (std::size_t w = 0; w < p; ++w) {
    const WorkerIteration& row = record.workers[w];
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
    WorkerWindow& sum = sums_.workers[w];
    WorkerWindow& worker = out.workers[w];
    worker.gpu_type = sum.gpu_type;
    worker.batch_size = sum.batch_size * mean;
    worker.compute_s = sum.compute_s * mean;
    worker.comm_s = sum.comm_s * mean;
    worker.wait_s = sum.wait_s * mean;
    worker.throughput_gbps = ratio(bytes_sent_[w] * 8e-9, sum.comm_s);
    worker.retransmit_rate = ratio(retransmits_[w], bytes_sent_[w] / segment_bytes_);
    worker.cpu_time_ratio = sum.cpu_time_ratio * mean;
    worker.memory_util = sum.memory_util * mean;
    worker.samples_per_s = ratio(sum.batch_size, sum.compute_s);
    worker.grad_std_norm = sum.grad_std_norm * mean;
    worker.grad_var_norm = sum.grad_var_norm * mean;
    std::string gpu_type = std::move(sum.gpu_type);
    sum = WorkerWindow{};
    sum.gpu_type = std::move(gpu_type);
    bytes_sent_[w] = 0;
    retransmits_[w] = 0;
  }
  iterations_ = 0;
  sums_.time_s = 0;
  sums_.iteration_s = 0;
  sums_.train_loss = 0;
  sums_.train_accuracy = 0;
  sums_.epochs = 0;
}

void write_window_metrics_csv(std::ostream& out, const std::vector<WindowMetrics>& windows) {
  for (std::size_t c = 0; c < kColumns.size(); ++c) out << (c ? "," : "") << kColumns[c];
  out << '\n';
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const WindowMetrics& window = windows[i];
    for (std::size_t w = 0; w < window.workers.size(); ++w) {
      const WorkerWindow& worker = window.workers[w];
      DYNAMIX_CHECK(worker.gpu_type.find_first_of(",\"\n\r") == std::string::npos,
                    "GPU type '" << worker.gpu_type << "' cannot be written to CSV");
      out << i << ',' << window.iterations;
      for (double value : {window.time_s, window.iteration_s, window.train_loss,
                           window.train_accuracy, window.train_accuracy_change,
                           window.validation_accuracy, window.progress, window.epochs}) {
        out << ',';
        write_number(out, value);
      }
      out << ',' << w << ',' << worker.gpu_type;
      for (double value :
           {worker.batch_size, worker.compute_s, worker.comm_s, worker.wait_s,
            worker.throughput_gbps, worker.retransmit_rate, worker.cpu_time_ratio,
            worker.memory_util, worker.samples_per_s, worker.grad_std_norm, worker.grad_var_norm}) {
        out << ',';
        write_number(out, value);
      }
      out << '\n';
    }
  }
}

namespace {

/// Reads and checks the header line.
void read_header(std::istream& in, const std::string& source) {
  std::string expected;
  for (std::size_t c = 0; c < kColumns.size(); ++c) {
    if (c > 0) expected += ',';
    expected += kColumns[c];
  }
  std::string line;
  if (!std::getline(in, line))
    throw InputError(source, 1, "", "the header " + expected, "an empty file");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line != expected) throw InputError(source, 1, "", "the header " + expected, "'" + line + "'");
}

/// A window's own fields from its first row (worker 0's).
WindowMetrics start_window(const RowReader& row, std::int64_t index, std::int64_t worker,
                           std::size_t windows) {
  if (index != static_cast<std::int64_t>(windows)) {
    row.fail(0, "window " + std::to_string(windows) + " (windows numbered in order)");
  }
  if (worker != 0) row.fail(10, "worker 0 first in each window");
  WindowMetrics window;
  window.iterations = row.integer(1);
  window.time_s = row.number(2);
  window.iteration_s = row.number(3);
  window.train_loss = row.number(4);
  window.train_accuracy = row.number(5);
  window.train_accuracy_change = row.number(6);
  window.validation_accuracy = row.number(7);
  window.progress = row.number(8);
  window.epochs = row.number(9);
  return window;
}

/// A later row of the window: the next worker, with the window's fields repeated unchanged.
void check_same_window(const RowReader& row, const std::vector<std::string_view>& fields,
                       const std::vector<std::string>& window_fields, const WindowMetrics& window,
                       std::int64_t index, std::int64_t worker) {
  if (worker != static_cast<std::int64_t>(window.workers.size())) {
    row.fail(10,
             "worker " + std::to_string(window.workers.size()) + " (workers numbered in order)");
  }
  for (std::size_t c = 1; c < kWindowFields; ++c) {
    if (fields[c] != window_fields[c]) {
      row.fail(c, "'" + window_fields[c] + "', the same value on every row of window " +
                      std::to_string(index));
    }
  }
}

WorkerWindow read_worker(const RowReader& row) {
  WorkerWindow worker;
  worker.gpu_type = std::string(row.text(11));
  worker.batch_size = row.number(12);
  worker.compute_s = row.number(13);
  worker.comm_s = row.number(14);
  worker.wait_s = row.number(15);
  worker.throughput_gbps = row.number(16);
  worker.retransmit_rate = row.number(17);
  worker.cpu_time_ratio = row.number(18);
  worker.memory_util = row.number(19);
  worker.samples_per_s = row.number(20);
  worker.grad_std_norm = row.number(21);
  worker.grad_var_norm = row.number(22);
  return worker;
}

}  // namespace

std::vector<WindowMetrics> read_window_metrics_csv(std::istream& in, const std::string& source) {
  read_header(in, source);
  std::vector<WindowMetrics> windows;
  std::vector<std::string> window_fields(kWindowFields);
  std::string line;
  for (int line_number = 2; std::getline(in, line); ++line_number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string_view> fields = split(line);
    if (fields.size() != kColumns.size()) {
      throw InputError(source, line_number, "", std::to_string(kColumns.size()) + " fields",
                       std::to_string(fields.size()));
    }
    const RowReader row(source, line_number, fields);
    const std::int64_t index = row.integer(0);
    const std::int64_t worker = row.integer(10);
    if (windows.empty() || index != static_cast<std::int64_t>(windows.size()) - 1) {
      windows.push_back(start_window(row, index, worker, windows.size()));
      for (std::size_t c = 1; c < kWindowFields; ++c) window_fields[c] = fields[c];
    } else {
      check_same_window(row, fields, window_fields, windows.back(), index, worker);
    }
    windows.back().workers.push_back(read_worker(row));
  }
  return windows;
}

double measured_noise_scale(const WindowMetrics& window) {
  double sum = 0;
  for (const WorkerWindow& worker : window.workers) sum += worker.grad_var_norm * worker.batch_size;
  return window.workers.empty() ? 0 : sum / static_cast<double>(window.workers.size());
}

double goodput_optimal_batch(const WindowMetrics& window) {
  if (window.workers.empty()) return 0;
  double global = 0, speed = 0;
  for (const WorkerWindow& worker : window.workers) {
    if (!(worker.samples_per_s > 0) || !std::isfinite(worker.samples_per_s)) return 0;
    global += worker.batch_size;
    speed += worker.samples_per_s;
  }
  const double noise = measured_noise_scale(window);
  const double overhead = window.iteration_s - global / speed;
  const double optimum = std::sqrt(noise * overhead * speed);
  return noise > 0 && overhead > 0 && std::isfinite(optimum) ? optimum : 0;
}

}  // namespace dynamix
