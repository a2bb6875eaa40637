// The raw per-worker metrics of one decision window: the schema that both the simulator and
// real workers report, and the only input of the ObservationBuilder.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/scenario/training_run.h"

namespace dynamix {

/// One worker over one window of k iterations (means over the window unless noted).
struct WorkerWindow {
  std::string gpu_type = {};
  /// Batch the worker ran during the window, samples.
  double batch_size = 0;
  double compute_s = 0;
  double comm_s = 0;
  double wait_s = 0;
  /// Bytes sent during synchronization / synchronization time, Gb/s.
  double throughput_gbps = 0;
  /// Retransmitted segments per segment sent.
  double retransmit_rate = 0;
  double cpu_time_ratio = 0;
  double memory_util = 0;
  /// Samples per second of GPU compute (batch / compute_s).
  double samples_per_s = 0;
  double grad_std_norm = 0;
  double grad_var_norm = 0;
};

/// The cluster over one window; `workers` may have any length.
struct WindowMetrics {
  std::int64_t iterations = 0;
  /// Simulated (or wall-clock) time at the end of the window.
  double time_s = 0;
  double iteration_s = 0;
  double train_loss = 0;
  double train_accuracy = 0;
  /// Change of train_accuracy against the previous window.
  double train_accuracy_change = 0;
  /// Latest validation accuracy (0 before the first validation).
  double validation_accuracy = 0;
  /// Fraction of the training budget spent, [0, 1].
  double progress = 0;
  double epochs = 0;
  /// Fractions of the epoch budget and of the time budget spent, [0, 1]; 0 without that budget
  /// (or a report that does not say).
  double epoch_budget_used = 0;
  double time_budget_used = 0;
  /// Validation accuracy over the target accuracy, [0, 1]; 0 before the first validation or
  /// without a known target.
  double target_progress = 0;
  std::vector<WorkerWindow> workers;
};

/// B_noise measured from the workers' normalized gradient variance (σ²_norm,i · b_i); 0 for a
/// window without workers.
double measured_noise_scale(const WindowMetrics& window);
/// AdaptDL's smoothing of the gradient statistics a goodput rule reads (GradientNoiseScale,
/// petuum/adaptdl adaptdl/torch/gradient_noise_scale.py: smoothing 0.999 a step): a bias-corrected
/// exponential average in which a window of k iterations at global batch B keeps a weight of
/// 0.999^(k·B/B₀) of the past, B₀ the first window's global batch, so that the memory spans
/// about a thousand first-window batches of samples. AdaptDL averages the gradient's squared norm
/// and variance apart and divides; this averages the window's B_noise (measured_noise_scale),
/// the one statistic a window carries.
class SmoothedNoiseScale {
 public:
  /// Forgets every window seen (a new episode, or a change of the job's members).
  void reset();
  /// Takes `window` in and returns the smoothed B_noise; a window without a measurement (0)
  /// leaves the average as it was.
  double update(const WindowMetrics& window);

 private:
  static constexpr double kSmoothing = 0.999;
  double first_global_batch_ = 0;
  double biased_ = 0;
  double weight_ = 0;
};

/// The global batch that maximizes goodput, samples per second × statistical efficiency
/// G/(T(G)·(B_noise + G)) (Pollux; sim/training/dynamics.h), when an iteration at a speed-balanced
/// split takes T(G) = G/S + c: S the workers' summed samples per second of compute, c the rest of
/// the window's iteration time at its own global batch (communication, barrier wait, and any
/// imbalance of the window's split). Setting the derivative to 0 gives G* = √(B_noise·c·S): the
/// geometric mean of the noise scale and the batch whose compute takes as long as the overhead.
/// A one-window estimate: S includes each GPU's fixed per-iteration cost, which a fit over many
/// batches would count in c. 0 when the window lacks workers, a speed, a noise scale or an
/// overhead, or the product overflows.
double goodput_optimal_batch(const WindowMetrics& window);
/// Pollux's hysteresis: a goodput rule changes batches only for a gain above this share.
inline constexpr double kGoodputHysteresis = 0.05;

/// Whether the window's global batch is worth keeping: its goodput under the one-window model of
/// goodput_optimal_batch is within `tolerance` (0.05: 5%) of the optimum's, the hysteresis
/// Pollux's rule changes batches with, which keeps a noisy B_noise from moving the batch every
/// window. False when the window has no optimum.
bool goodput_within(const WindowMetrics& window, double tolerance);

/// Folds a TrainingRun's iteration records into WindowMetrics.
class WindowAccumulator {
 public:
  WindowAccumulator() = default;
  /// Windows of `run`'s workers (their GPU types); `segment_bytes` (the TCP MSS) turns bytes
  /// sent into segments for the retransmission rate.
  WindowAccumulator(const TrainingRun& run, double segment_bytes);

  void add(const IterationRecord& record);
  /// The window so far, one row per worker of the run (a worker preempted for the whole window:
  /// a row of zeros); resets the accumulator. `previous_train_accuracy` gives the change.
  WindowMetrics finish(double previous_train_accuracy, double validation_accuracy, double progress);
  /// The same into `out`, reusing its storage.
  void finish(double previous_train_accuracy, double validation_accuracy, double progress,
              WindowMetrics& out);
  std::int64_t iterations() const { return iterations_; }

 private:
  std::int64_t iterations_ = 0;
  double segment_bytes_ = 1460;
  WindowMetrics sums_;
  /// Per worker over the window: retransmitted segments, bytes sent.
  std::vector<double> retransmits_;
  std::vector<double> bytes_sent_;
  /// Per worker: iterations of the window it was not preempted in.
  std::vector<std::int64_t> present_;
};

}  // namespace dynamix
