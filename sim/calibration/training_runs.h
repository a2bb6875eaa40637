// Logs of real training runs, one row per window of k iterations (a PyTorch reference job's or a
// user's own), and the gradient noise scale they measure: B_simple from a rank's local and the
// all-reduced gradient norms (McCandlish et al. 2018, App. A). The CSV schema is in
// docs/calibration.md.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dynamix {

/// One window of a run: a row of the runs CSV.
struct RunWindow {
  /// 0-based position in its run.
  int window = 0;
  /// Iterations, samples and training seconds completed at the window's end.
  std::int64_t iteration = 0;
  double samples = 0;
  double time_s = 0;
  /// Global batch B during the window, and rank 0's batch b.
  int global_batch = 0;
  int local_batch = 0;
  /// LR multiplier against the reference batch's LR.
  double lr_factor = 1;
  /// Mean training loss over the window.
  double train_loss = 0;
  /// Validation accuracy at the window's end, when it was measured.
  std::optional<double> validation_accuracy;
  /// Means over the window of |g_b|² (rank 0's gradient) and |g_B|² (the all-reduced one).
  double local_norm_sq = 0;
  double global_norm_sq = 0;
  /// 1-based line in its file, for messages.
  int line = 0;
};

struct RunLog {
  std::string label;
  /// In window order, 0, 1, 2, ...
  std::vector<RunWindow> windows;
};

struct RunsFile {
  std::string path;
  /// The '#' lines before the header, without the '#'.
  std::vector<std::string> provenance;
  /// In order of first appearance.
  std::vector<RunLog> runs;
};

/// The header a runs CSV has, exactly.
inline constexpr const char* kRunsHeader =
    "run,window,iteration,samples,time_s,global_batch,local_batch,lr_factor,train_loss,"
    "validation_accuracy,local_norm_sq,global_norm_sq";

/// Reads a runs CSV: optional '#' provenance lines, kRunsHeader, then rows. A run's rows need
/// not be adjacent but come in window order; within a run iterations and samples increase and
/// time does not decrease; b <= B. Bad input (another header, a cell that is not a number in
/// range, a window out of order, a run without a validation accuracy, no rows) is an InputError
/// naming the file and line.
RunsFile read_runs(const std::string& path);

/// The two halves of B_simple measured in one window: |G|² ≈ (B|g_B|² − b|g_b|²)/(B − b) and
/// tr(Σ) ≈ (|g_b|² − |g_B|²)/(1/b − 1/B) (McCandlish et al. 2018, App. A). Either may be negative
/// in a window: they are unbiased, noisy estimates.
struct NoiseScaleParts {
  double gradient_sq = 0;
  double trace_covariance = 0;
};
/// The window's parts; nullopt when B <= b (one rank: nothing to compare).
std::optional<NoiseScaleParts> noise_scale_parts(const RunWindow& window);

/// B_simple of a stretch of windows as the ratio of their summed parts, which stays positive
/// where single windows do not; nullopt when either sum is not positive.
std::optional<double> pooled_noise_scale(std::span<const NoiseScaleParts> parts);

/// The run's global batch in its first window (how runs are chosen for a fit by batch).
int first_global_batch(const RunLog& run);

}  // namespace dynamix
