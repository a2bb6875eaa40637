// What adaptive baselines learn online about the cluster: each worker's compute time as a
// linear function of its batch, and the synchronization time, from observed windows.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "gym/window_metrics.h"

namespace dynamix {

/// Per-worker least-squares fit of compute_s = fixed + per_sample·b (Pollux profiles the same
/// way), plus the mean synchronization time.
class ThroughputModel {
 public:
  /// `memory` in (0, 1]: each window's weight in the fit is `memory` times the next one's;
  /// 1 weighs every window alike, a smaller memory follows a worker whose speed changes.
  explicit ThroughputModel(double memory = 1);
  void reset(std::size_t workers);
  void observe(const WindowMetrics& window);
  /// Predicted compute time of `worker` on a batch of `batch` samples.
  double compute_s(std::size_t worker, double batch) const;
  /// Predicted iteration time: slowest worker's compute plus synchronization.
  double iteration_s(const std::vector<int>& batches) const;
  /// Samples per second of `worker` near its observed batches.
  double speed(std::size_t worker) const;
  /// Batches summing to `global_batch` in proportion to speed, each within [low, high[w]]; with
  /// `slowdowns`, worker w's speed is divided by slowdowns[w] first.
  std::vector<int> proportional_split(int global_batch, int low, const std::vector<int>& high,
                                      std::span<const double> slowdowns = {}) const;
  bool empty() const { return fits_.empty() || fits_.front().count == 0; }

 private:
  struct Fit {
    double count = 0, sum_b = 0, sum_t = 0, sum_bb = 0, sum_bt = 0;
  };
  double memory_;
  std::vector<Fit> fits_;
  double comm_s_ = 0;
};

}  // namespace dynamix
