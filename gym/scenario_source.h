// Where environments get their scenarios: one fixed scenario, or a seeded sampler that
// randomizes the cluster, network and workload (domain randomization).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/scenario/scenario.h"

namespace dynamix {

class ScenarioSource {
 public:
  virtual ~ScenarioSource() = default;
  /// The scenario for an episode started with this seed; the same seed gives the same scenario.
  virtual std::shared_ptr<const Scenario> scenario_for(std::uint64_t seed) const = 0;
};

/// Always the same scenario.
class FixedScenario : public ScenarioSource {
 public:
  explicit FixedScenario(std::shared_ptr<const Scenario> scenario)
      : scenario_(std::move(scenario)) {}
  std::shared_ptr<const Scenario> scenario_for(std::uint64_t) const override { return scenario_; }

 private:
  std::shared_ptr<const Scenario> scenario_;
};

struct SamplerOptions {
  /// Scenario file every sample starts from.
  std::string base = kDefaultScenario;
  /// "dotted.key=value" overrides applied to the base (as load_scenario takes them).
  std::vector<std::string> overrides = {};
  /// Worker count range (inclusive).
  int min_workers = 4;
  int max_workers = 16;
  /// GPU types to mix.
  std::vector<std::string> gpu_types = {"A100", "V100", "T4"};
  /// NIC bandwidth range, Gb/s.
  double min_bandwidth_gbps = 10;
  double max_bandwidth_gbps = 100;
  /// Per-link loss range.
  double max_loss_rate = 1e-4;
  /// Probability that a sample carries background traffic.
  double background_probability = 0.3;
  /// Workloads and optimizers ("sgd", "adam") to draw from (catalog names; empty: keep the
  /// base's).
  std::vector<std::string> workloads = {};
  std::vector<std::string> optimizers = {};
};

/// Domain randomization over cluster size, GPU mix, bandwidth, loss, background, workload.
/// Each sample is a star of single-GPU workers (one switch, identical NICs) that keeps the base's
/// synchronization, network options, variability and budget. Safe to call from many threads.
class ScenarioSampler : public ScenarioSource {
 public:
  /// Loads the base scenario; EnvError for inconsistent ranges or unknown GPU types, workloads
  /// or optimizers; InputError from loading the base.
  explicit ScenarioSampler(SamplerOptions options);
  std::shared_ptr<const Scenario> scenario_for(std::uint64_t seed) const override;
  const SamplerOptions& options() const { return options_; }

 private:
  SamplerOptions options_;
  std::shared_ptr<const Scenario> base_;
  std::vector<GpuSpec> gpus_;
  std::vector<Workload> workloads_;
  std::vector<Optimizer> optimizers_;
};

}  // namespace dynamix
