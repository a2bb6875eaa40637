// Decision logs and the rollout policies of `dynamix simulate --policy`.
#include "gym/episode_log.h"

#include <numeric>
#include <ostream>

#include "sim/io/json_writer.h"

namespace dynamix {

void DecisionLog::record(const StepResult& step, std::span<const int> actions) {
  const std::size_t p = step.rewards.size();
  ++decisions_;
  for (std::size_t w = 0; w < p; ++w) {
    DecisionRow& row = rows_.emplace_back();
    row.decision = step.info.decision;
    row.iteration = step.info.iteration;
    row.time_s = step.info.time_s;
    row.worker = w;
    row.batch_size = step.info.batches[w];
    if (w < actions.size() && actions[w] >= 0) row.action = actions[w];
    row.reward = step.rewards[w];
  }
  if (p > 0) {
    episode_return_ +=
        std::accumulate(step.rewards.begin(), step.rewards.end(), 0.0) / static_cast<double>(p);
  }
}

void DecisionLog::write_csv(std::ostream& out) const {
  out << "decision,iteration,time_s,worker,batch_size,action,reward\n";
  for (const DecisionRow& row : rows_) {
    out << row.decision << ',' << row.iteration << ',' << format_number(row.time_s) << ','
        << row.worker << ',' << row.batch_size << ',';
    if (row.action) out << *row.action;
    out << ',' << format_number(row.reward) << '\n';
  }
}

}  // namespace dynamix
