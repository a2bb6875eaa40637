// Decision logs of `dynamix simulate --policy`.
#include "gym/episode_log.h"

#include <numeric>
#include <ostream>

#include "sim/io/json_writer.h"

namespace dynamix {

const char* decision_columns() {
  return "decision,iteration,time_s,worker,action,previous_batch,requested_batch,batch_size,"
         "clamped,hold,global_batch,reward";
}

void DecisionLog::request(std::span<const int> current, std::span<const int> requested) {
  previous_.assign(current.begin(), current.end());
  requested_.assign(requested.begin(), requested.end());
  pending_ = true;
}

void DecisionLog::record(const StepResult& step, std::span<const int> actions) {
  const std::vector<int>& applied = step.info.batches;
  const std::size_t p = step.rewards.size();
  if (!pending_) {
    if (previous_.size() != applied.size()) previous_ = applied;
    requested_ = applied;
  }
  const std::int64_t global = std::accumulate(applied.begin(), applied.end(), std::int64_t{0});
  ++decisions_;
  for (std::size_t w = 0; w < p; ++w) {
    DecisionRow& row = rows_.emplace_back();
    row.decision = step.info.decision;
    row.iteration = step.info.iteration;
    row.time_s = step.info.time_s;
    row.worker = w;
    row.action = w < actions.size() && actions[w] >= 0 ? actions[w] : -1;
    row.previous_batch = w < previous_.size() ? previous_[w] : applied[w];
    row.requested_batch = w < requested_.size() ? requested_[w] : applied[w];
    row.batch_size = applied[w];
    row.clamped = row.batch_size != row.requested_batch;
    row.hold = row.batch_size == row.previous_batch;
    row.global_batch = global;
    row.reward = step.rewards[w];
  }
  if (p > 0) {
    episode_return_ +=
        std::accumulate(step.rewards.begin(), step.rewards.end(), 0.0) / static_cast<double>(p);
  }
  previous_ = applied;
  pending_ = false;
}

void DecisionLog::write_csv(std::ostream& out) const {
  out << decision_columns() << '\n';
  for (const DecisionRow& row : rows_) {
    out << row.decision << ',' << row.iteration << ',' << format_number(row.time_s) << ','
        << row.worker << ',' << row.action << ',' << row.previous_batch << ','
        << row.requested_batch << ',' << row.batch_size << ',' << (row.clamped ? 1 : 0) << ','
        << (row.hold ? 1 : 0) << ',' << row.global_batch << ',' << format_number(row.reward)
        << '\n';
  }
}

}  // namespace dynamix
