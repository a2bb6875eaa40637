// The decisions of one episode: what `dynamix simulate --policy` writes as decisions.csv and
// episode_return.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"

namespace dynamix {

/// One row of decisions.csv: one worker at one decision; every field means one thing.
struct DecisionRow {
  std::int64_t decision = 0;
  /// Iterations run when the decision's window ended.
  std::int64_t iteration = 0;
  double time_s = 0;
  std::size_t worker = 0;
  /// The index into the action set the policy took; -1 when it set the batch directly (the
  /// baselines).
  int action = -1;
  /// The batch in force before the decision.
  int previous_batch = 0;
  /// The batch the policy asked for.
  int requested_batch = 0;
  /// The batch the environment ran: the request clamped to the bounds and the worker's memory.
  int batch_size = 0;
  /// The environment clamped the request (batch_size != requested_batch).
  bool clamped = false;
  /// The batch did not change (batch_size == previous_batch).
  bool hold = false;
  /// Σ of every worker's batch after the decision.
  std::int64_t global_batch = 0;
  float reward = 0;
};

class DecisionLog {
 public:
  /// What the policy asks for at the coming decision, given the batches in force (`current`).
  /// Without it, record() takes the request to be the applied batch and the batch in force to
  /// be the one it last recorded (the applied one at the first decision).
  void request(std::span<const int> current, std::span<const int> requested);
  /// Records the decision that produced `step`; `actions` are the action indices taken (empty
  /// or negative: none, the policy set the batch directly).
  void record(const StepResult& step, std::span<const int> actions);
  const std::vector<DecisionRow>& rows() const { return rows_; }
  std::int64_t decisions() const { return decisions_; }
  /// Σ over decisions of the mean reward over workers.
  double episode_return() const { return episode_return_; }
  /// decisions.csv: the header (decision_columns()) and a row per worker and decision.
  void write_csv(std::ostream& out) const;

 private:
  std::vector<DecisionRow> rows_;
  std::vector<int> previous_;
  std::vector<int> requested_;
  bool pending_ = false;
  std::int64_t decisions_ = 0;
  double episode_return_ = 0;
};

/// decision,iteration,time_s,worker,action,previous_batch,requested_batch,batch_size,clamped,
/// hold,global_batch,reward.
const char* decision_columns();

}  // namespace dynamix
