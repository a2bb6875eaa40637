// The hand-made batch-size policies a practitioner would otherwise pick; PPO must beat them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "policies/baselines/throughput_model.h"
#include "policies/policy.h"
#include "sim/core/random.h"

namespace dynamix {

/// The same batch on every worker, always.
class StaticPolicy : public Policy {
 public:
  explicit StaticPolicy(int batch) : batch_(batch) {}
  std::string name() const override { return "static:" + std::to_string(batch_); }
  int initial_batch() const override { return batch_; }
  std::vector<int> decide(const BatchSizeEnv& env, const Observation& observation) override;

 private:
  int batch_;
};

/// A uniformly random action per worker: the floor every learned policy must clear.
class RandomPolicy : public Policy {
 public:
  explicit RandomPolicy(std::uint64_t seed) : rng_(seed, stream_id("random-policy")) {}
  std::string name() const override { return "random"; }
  std::vector<int> decide(const BatchSizeEnv& env, const Observation& observation) override;

 private:
  Rng rng_;
};

/// LB-BSP-style split (Chen et al., SoCC'20): keeps the global batch and gives each worker a
/// share proportional to its measured speed, so compute times meet at the barrier.
class ProportionalPolicy : public Policy {
 public:
  std::string name() const override { return "proportional"; }
  void begin_episode(const BatchSizeEnv& env) override;
  std::vector<int> decide(const BatchSizeEnv& env, const Observation& observation) override;

 private:
  ThroughputModel model_;
  int global_batch_ = 0;
};

/// Pollux/AdaptDL goodput (Qiao et al., OSDI'21): one batch on every worker, chosen to maximize
/// throughput × statistical efficiency, changed only for a gain above 5% (hysteresis). With
/// `proportional_split` the chosen global batch is split by speed instead of evenly.
class GoodputPolicy : public Policy {
 public:
  explicit GoodputPolicy(bool proportional_split = false) : split_(proportional_split) {}
  std::string name() const override { return split_ ? "goodput+proportional" : "goodput"; }
  void begin_episode(const BatchSizeEnv& env) override;
  std::vector<int> decide(const BatchSizeEnv& env, const Observation& observation) override;

 private:
  bool split_;
  ThroughputModel model_;
  std::vector<int> current_;
};

/// Gradient-noise-scale threshold (KungFu-like, Mai et al., OSDI'20): starts every worker at the
/// smallest batch and grows it by one step while the global batch is below the measured noise
/// scale B_noise.
class GnsPolicy : public Policy {
 public:
  explicit GnsPolicy(int initial_batch = 32) : initial_batch_(initial_batch) {}
  std::string name() const override { return "gns"; }
  int initial_batch() const override { return initial_batch_; }
  std::vector<int> decide(const BatchSizeEnv& env, const Observation& observation) override;

 private:
  int initial_batch_;
};

/// A policy from its name: static:B, random, proportional, goodput, goodput+proportional, gns.
/// Unknown names are an InputError on `source` (the option or key that named it) listing the
/// valid ones (ppo:PATH is resolved by the caller).
std::unique_ptr<Policy> make_baseline(const std::string& name, std::uint64_t seed,
                                      const std::string& source = "policy");
/// "static:B, random, proportional, goodput, goodput+proportional, gns".
std::string baseline_names();

}  // namespace dynamix
