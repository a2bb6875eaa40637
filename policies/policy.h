// One interface for every batch-size policy: hand-made baselines and learned PPO alike.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"

namespace dynamix {

/// Chooses every worker's next batch at each decision point of a BatchSizeEnv.
class Policy {
 public:
  virtual ~Policy() = default;
  /// The name evaluation reports use ("static:128", "goodput", "ppo").
  virtual std::string name() const = 0;
  /// The batch every worker starts the episode at; 0 leaves the environment's default.
  virtual int initial_batch() const { return 0; }
  /// Called after env.reset(); policies with per-episode state clear it here.
  virtual void begin_episode(const BatchSizeEnv& env) { (void)env; }
  /// The batch each worker should run next, from the environment's current observation and
  /// raw window (env.window()); the environment clamps to bounds and memory.
  virtual std::vector<int> decide(const BatchSizeEnv& env, const Observation& observation) = 0;
};

}  // namespace dynamix
