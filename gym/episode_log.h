// The decisions of one episode: what `dynamix simulate --policy` writes as decisions.csv and
// episode_return.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"

namespace dynamix {

/// One row of decisions.csv: a worker's batch and reward after one decision.
struct DecisionRow {
  std::int64_t decision = 0;
  /// Iterations run when the decision's window ended.
  std::int64_t iteration = 0;
  double time_s = 0;
  std::size_t worker = 0;
  int batch_size = 0;
  /// The action index taken; none when the policy set the batch directly.
  std::optional<int> action;
  float reward = 0;
};

class DecisionLog {
 public:
  /// Records the decision that produced `step`; `actions` are the indices taken (negative or
  /// absent: none, the policy set the batch directly).
  void record(const StepResult& step, std::span<const int> actions);
  const std::vector<DecisionRow>& rows() const { return rows_; }
  std::int64_t decisions() const { return decisions_; }
  /// Σ over decisions of the mean reward over workers.
  double episode_return() const { return episode_return_; }
  /// decision,iteration,time_s,worker,batch_size,action,reward (action empty when none).
  void write_csv(std::ostream& out) const;

 private:
  std::vector<DecisionRow> rows_;
  std::int64_t decisions_ = 0;
  double episode_return_ = 0;
};

}  // namespace dynamix
