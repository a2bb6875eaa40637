// Rolling out one episode with a simple policy and logging its decisions: what
// `dynamix simulate --policy static:B|random` writes as decisions.csv and episode_return.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "sim/core/random.h"

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
  /// Records the decision that produced `step`; `actions` are the indices taken, empty when the
  /// policy chose batch sizes.
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

/// The policies `dynamix simulate --policy` accepts: "static:B" keeps every worker at B
/// samples (the environment clamps to bounds and memory); "random" draws uniform action
/// indices from a generator seeded by the run's seed.
class RolloutPolicy {
 public:
  /// InputError naming `option` for anything else.
  static RolloutPolicy parse(const std::string& spec, std::uint64_t seed,
                             const std::string& option = "--policy");
  /// "static:128" or "random".
  std::string description() const;
  /// The reset options the policy wants (static: start at B).
  ResetOptions reset_options() const;
  /// Takes one decision in `env`, writing the step into `out` and logging it.
  void act(BatchSizeEnv& env, StepResult& out, DecisionLog& log);

 private:
  RolloutPolicy(int static_batch, std::uint64_t seed);

  /// 0 for the random policy.
  int static_batch_;
  Rng rng_;
  std::vector<int> choice_;
};

struct EpisodeSummary {
  double episode_return = 0;
  std::int64_t decisions = 0;
  bool terminated = false;
  bool truncated = false;
};

/// Resets `env` with `seed` and runs `policy` until the episode ends, logging every decision.
EpisodeSummary run_episode(BatchSizeEnv& env, RolloutPolicy& policy, std::uint64_t seed,
                           DecisionLog& log);

}  // namespace dynamix
