// What `dynamix simulate --record` writes about each simulated iteration: every worker's
// iteration (iterations.csv), one row per worker per window of N iterations (windows.csv), or
// nothing; validation.csv (one row per epoch) in every mode.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/scenario/training_run.h"
#include "studies/run_directory.h"

namespace dynamix {

enum class RecordMode {
  /// iterations.csv: one row per worker per iteration.
  kIterations,
  /// windows.csv: one row per worker per window of N consecutive iterations (the decision
  /// windows of a policy), means and sums over the window.
  kWindows,
  /// No per-iteration file.
  kNone,
};

/// "iterations", "windows" or "none"; nullopt for any other text.
std::optional<RecordMode> parse_record_mode(std::string_view name);
std::string_view record_mode_name(RecordMode mode);
/// The file the mode writes beside validation.csv ("" for none).
std::string_view record_file_name(RecordMode mode);

/// The columns of iterations.csv and of windows.csv, in order.
const std::vector<std::string>& iteration_columns();
const std::vector<std::string>& window_columns();

/// Writes the files of `mode` into a run directory, one iteration at a time.
class IterationLog {
 public:
  /// `window_iterations` (N >= 1) is the window length of kWindows; window w covers iterations
  /// [w·N, (w+1)·N), the last one possibly shorter.
  IterationLog(const RunDirectory& directory, RecordMode mode, int window_iterations);
  IterationLog(const IterationLog&) = delete;
  IterationLog& operator=(const IterationLog&) = delete;
  ~IterationLog();

  void add(const TrainingRun& run, const IterationRecord& record);
  /// Samples of every iteration added: Σ over iterations of the global batch.
  std::int64_t samples() const { return samples_; }
  /// Σ over iterations and workers of the communication time and of retransmission timeouts.
  double comm_s() const { return comm_s_; }
  double timeouts() const { return timeouts_; }
  /// Each worker's batch in the first iteration added (empty before one).
  const std::vector<int>& first_batches() const { return first_batches_; }
  /// Writes a partial last window and flushes; InputError naming a file that failed.
  void close();

 private:
  struct WorkerSums {
    double batch_size = 0, load_s = 0, compute_s = 0, wait_s = 0, comm_s = 0, bytes_sent = 0,
           bytes_received = 0, retransmits = 0, timeouts = 0, throughput_gbps = 0,
           cpu_time_ratio = 0, memory_util = 0, straggling = 0, grad_std_norm = 0,
           grad_var_norm = 0;
  };
  void write_iteration(const TrainingRun& run, const IterationRecord& record);
  void accumulate(const IterationRecord& record);
  void write_window();

  RecordMode mode_;
  std::int64_t window_iterations_;
  std::optional<CsvWriter> detail_;
  CsvWriter validation_;
  // The window being accumulated (kWindows).
  const TrainingRun* run_ = nullptr;
  std::vector<WorkerSums> sums_;
  std::int64_t window_ = 0;
  std::int64_t first_iteration_ = 0;
  std::int64_t in_window_ = 0;
  double start_s_ = 0;
  double iteration_s_ = 0;
  double end_s_ = 0;
  IterationStats last_training_;
  std::int64_t samples_ = 0;
  double comm_s_ = 0;
  double timeouts_ = 0;
  std::vector<int> first_batches_;
};

}  // namespace dynamix
