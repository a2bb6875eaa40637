// IterationLog: iterations.csv, windows.csv and validation.csv.
#include "studies/iteration_log.h"

#include <cmath>

#include "sim/core/check.h"

namespace dynamix {

std::optional<RecordMode> parse_record_mode(std::string_view name) {
  if (name == "iterations") return RecordMode::kIterations;
  if (name == "windows") return RecordMode::kWindows;
  if (name == "none") return RecordMode::kNone;
  return std::nullopt;
}

std::string_view record_mode_name(RecordMode mode) {
  switch (mode) {
    case RecordMode::kIterations:
      return "iterations";
    case RecordMode::kWindows:
      return "windows";
    case RecordMode::kNone:
      break;
  }
  return "none";
}

std::string_view record_file_name(RecordMode mode) {
  switch (mode) {
    case RecordMode::kIterations:
      return "iterations.csv";
    case RecordMode::kWindows:
      return "windows.csv";
    case RecordMode::kNone:
      break;
  }
  return "";
}

const std::vector<std::string>& iteration_columns() {
  static const std::vector<std::string> columns = {
      "iteration",      "worker",         "gpu_type",     "batch_size", "start_s",
      "load_s",         "compute_s",      "wait_s",       "comm_s",     "iteration_s",
      "bytes_sent",     "bytes_received", "retransmits",  "timeouts",   "throughput_gbps",
      "cpu_time_ratio", "memory_util",    "straggling",   "epoch",      "train_loss",
      "train_accuracy", "grad_std_norm",  "grad_var_norm"};
  return columns;
}

const std::vector<std::string>& window_columns() {
  static const std::vector<std::string> columns = {
      "window",       "first_iteration", "iterations",      "worker",         "gpu_type",
      "batch_size",   "start_s",         "window_s",        "load_s",         "compute_s",
      "wait_s",       "comm_s",          "iteration_s",     "bytes_sent",     "bytes_received",
      "retransmits",  "timeouts",        "throughput_gbps", "cpu_time_ratio", "memory_util",
      "straggling",   "epoch",           "train_loss",      "train_accuracy", "grad_std_norm",
      "grad_var_norm"};
  return columns;
}

IterationLog::IterationLog(const RunDirectory& directory, RecordMode mode, int window_iterations)
    : mode_(mode),
      window_iterations_(window_iterations),
      validation_(directory.file("validation.csv"),
                  {"epoch", "iteration", "time_s", "validation_accuracy"}) {
  DYNAMIX_CHECK(window_iterations >= 1, "window of " << window_iterations << " iterations");
  if (mode == RecordMode::kIterations) {
    detail_.emplace(directory.file(record_file_name(mode)), iteration_columns());
  } else if (mode == RecordMode::kWindows) {
    detail_.emplace(directory.file(record_file_name(mode)), window_columns());
  }
}

IterationLog::~IterationLog() = default;

void IterationLog::add(const TrainingRun& run, const IterationRecord& record) {
  if (first_batches_.empty()) {
    for (const WorkerIteration& worker : record.workers)
      first_batches_.push_back(worker.batch_size);
  }
  for (const WorkerIteration& worker : record.workers) {
    samples_ += worker.batch_size;
    comm_s_ += worker.comm_s;
    timeouts_ += worker.timeouts;
  }
  if (mode_ == RecordMode::kIterations) write_iteration(run, record);
  if (mode_ == RecordMode::kWindows) {
    run_ = &run;
    accumulate(record);
    if (in_window_ == window_iterations_) write_window();
  }
  if (record.validation_accuracy) {
    // The validation point crossed: a whole epoch, or a fraction with several an epoch.
    const int per_epoch = run.training_options().validations_per_epoch;
    const std::int64_t point = std::llround(record.training.epoch * per_epoch);
    if (per_epoch == 1) {
      validation_ << point;
    } else {
      validation_ << static_cast<double>(point) / per_epoch;
    }
    validation_ << record.iteration << to_seconds(record.end) << *record.validation_accuracy;
    validation_.end_row();
  }
}

void IterationLog::write_iteration(const TrainingRun& run, const IterationRecord& record) {
  CsvWriter& out = *detail_;
  const double start_s = to_seconds(record.start);
  const double iteration_s = to_seconds(record.end - record.start);
  for (std::size_t w = 0; w < record.workers.size(); ++w) {
    const WorkerIteration& row = record.workers[w];
    out << record.iteration << w << run.node(w).gpu << row.batch_size << start_s << row.load_s
        << row.compute_s << row.wait_s << row.comm_s << iteration_s << row.bytes_sent
        << row.bytes_received << row.retransmits << row.timeouts << row.throughput_gbps
        << row.cpu_time_ratio << row.memory_util << (row.straggling ? 1 : 0)
        << record.training.epoch << record.training.train_loss << record.training.train_accuracy
        << row.grad_std_norm << row.grad_var_norm;
    out.end_row();
  }
}

void IterationLog::accumulate(const IterationRecord& record) {
  if (in_window_ == 0) {
    sums_.assign(record.workers.size(), WorkerSums{});
    first_iteration_ = record.iteration;
    start_s_ = to_seconds(record.start);
    iteration_s_ = 0;
  }
  ++in_window_;
  iteration_s_ += to_seconds(record.end - record.start);
  end_s_ = to_seconds(record.end);
  last_training_ = record.training;
  for (std::size_t w = 0; w < record.workers.size(); ++w) {
    const WorkerIteration& row = record.workers[w];
    WorkerSums& sum = sums_[w];
    sum.batch_size += row.batch_size;
    sum.load_s += row.load_s;
    sum.compute_s += row.compute_s;
    sum.wait_s += row.wait_s;
    sum.comm_s += row.comm_s;
    sum.bytes_sent += row.bytes_sent;
    sum.bytes_received += row.bytes_received;
    sum.retransmits += row.retransmits;
    sum.timeouts += row.timeouts;
    sum.throughput_gbps += row.throughput_gbps;
    sum.cpu_time_ratio += row.cpu_time_ratio;
    sum.memory_util += row.memory_util;
    sum.straggling += row.straggling ? 1 : 0;
    sum.grad_std_norm += row.grad_std_norm;
    sum.grad_var_norm += row.grad_var_norm;
  }
}

void IterationLog::write_window() {
  CsvWriter& out = *detail_;
  const auto n = static_cast<double>(in_window_);
  for (std::size_t w = 0; w < sums_.size(); ++w) {
    const WorkerSums& sum = sums_[w];
    out << window_ << first_iteration_ << in_window_ << w << run_->node(w).gpu << sum.batch_size / n
        << start_s_ << end_s_ - start_s_ << sum.load_s / n << sum.compute_s / n << sum.wait_s / n
        << sum.comm_s / n << iteration_s_ / n << sum.bytes_sent << sum.bytes_received
        << sum.retransmits << sum.timeouts << sum.throughput_gbps / n << sum.cpu_time_ratio / n
        << sum.memory_util / n << sum.straggling / n << last_training_.epoch
        << last_training_.train_loss << last_training_.train_accuracy << sum.grad_std_norm / n
        << sum.grad_var_norm / n;
    out.end_row();
  }
  ++window_;
  in_window_ = 0;
}

void IterationLog::close() {
  if (mode_ == RecordMode::kWindows && in_window_ > 0) write_window();
  if (detail_) detail_->close();
  validation_.close();
}

}  // namespace dynamix
