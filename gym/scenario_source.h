// Where environments get their scenarios: one fixed scenario, or a seeded sampler that
// randomizes the cluster, network and workload (domain randomization).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/random.h"
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

/// A set of scenarios: the episode of seed s runs on scenarios[s mod n].
class ScenarioList : public ScenarioSource {
 public:
  /// At least one scenario.
  explicit ScenarioList(std::vector<std::shared_ptr<const Scenario>> scenarios);
  std::shared_ptr<const Scenario> scenario_for(std::uint64_t seed) const override {
    return scenarios_[seed % scenarios_.size()];
  }

 private:
  std::vector<std::shared_ptr<const Scenario>> scenarios_;
};

struct SamplerOptions {
  /// Scenario file every sample starts from.
  std::string base = kDefaultScenario;
  /// "dotted.key=value" overrides applied to the base (as load_scenario takes them).
  std::vector<std::string> overrides = {};
  /// Worker count range (inclusive), drawn log-uniformly so that every scale is seen as often.
  int min_workers = 4;
  int max_workers = 256;
  /// GPU types to mix.
  std::vector<std::string> gpu_types = {"H100", "A100", "V100", "T4"};
  /// NIC bandwidth range, Gb/s.
  double min_bandwidth_gbps = 10;
  double max_bandwidth_gbps = 100;
  /// Per-link loss range (one-tier samples).
  double max_loss_rate = 1e-4;
  /// Probability that a one-tier sample carries background traffic.
  double background_probability = 0.3;
  /// Fabric tiers to draw from: 1 a star (one switch), 2 a leaf-spine, 3 a k-ary fat-tree.
  std::vector<int> tiers = {1, 2, 3};
  /// Largest oversubscription of a leaf's (edge switch's) uplinks, drawn from [1, this].
  double max_oversubscription = 4;
  /// Probability that a sample synchronizes through parameter servers (1 to max_servers, on
  /// workers) instead of the base's architecture.
  double parameter_server_probability = 0.25;
  int max_servers = 4;
  /// Range of the per-worker batch every episode starts at (log-uniform); 0 keeps the base's.
  int min_start_batch = 32;
  int max_start_batch = 256;
  /// Workloads and optimizers ("sgd", "adam") to draw from (catalog names; empty: keep the
  /// base's).
  std::vector<std::string> workloads = {};
  std::vector<std::string> optimizers = {};
  /// Reachable samples: when > 0, each sample's target and time budget come from a reference
  /// job on it (every worker at `reference_batch`, or the most its memory holds) run without a
  /// time budget. The target stays the sample's where the reference reaches it within
  /// `reference_max_iterations` (or the epoch budget), and is otherwise `reference_share` of the
  /// best accuracy the reference measured (the catalog's targets are about 97% of a workload's
  /// final accuracy, catalog/workloads.yaml); the time budget is this factor times the
  /// reference's time to that target. 0 keeps the base's budget and the workload's target.
  double reference_budget_factor = 0;
  int reference_batch = 64;
  std::int64_t reference_max_iterations = 20000;
  double reference_share = 0.97;
};

/// The family `dynamix train --randomize` trains on and `dynamix evaluate --family` samples:
/// SamplerOptions' ranges around `base` (with `overrides`), every catalog workload, SGD and Adam,
/// and `reference_budget_factor` (`--family-budget`; 0: no reference job).
SamplerOptions training_family(const std::string& base, const std::vector<std::string>& overrides,
                               double reference_budget_factor = 0);

/// Domain randomization over cluster size, fabric, GPU mix, bandwidth, loss, background,
/// synchronization, starting batch, workload and optimizer. Each sample is a fabric of
/// single-GPU workers with identical NICs that keeps the base's network options, variability
/// and epoch budget (and, without a reference job, its time budget). Safe to call from many
/// threads.
class ScenarioSampler : public ScenarioSource {
 public:
  /// Loads the base scenario, its implausible values going to `diagnostics` (the run's); EnvError
  /// for inconsistent ranges or unknown GPU types, workloads or optimizers; InputError from
  /// loading the base. The samples' generated fabrics are not checked: their values are drawn
  /// from the ranges, and their spine links carry many hosts' bandwidth.
  ScenarioSampler(SamplerOptions options, Diagnostics& diagnostics);
  /// The same outside a run: the base's implausible values are warned about on stderr.
  explicit ScenarioSampler(SamplerOptions options);
  std::shared_ptr<const Scenario> scenario_for(std::uint64_t seed) const override;
  const SamplerOptions& options() const { return options_; }

 private:
  ScenarioSampler(SamplerOptions options, Diagnostics* diagnostics);

  SamplerOptions options_;
  std::shared_ptr<const Scenario> base_;
  /// Read once: a sample looks its GPUs up here.
  GpuCatalog catalog_;
  std::vector<GpuSpec> gpus_;
  std::vector<Workload> workloads_;
  std::vector<Optimizer> optimizers_;

  Topology sample_topology(Rng& rng, std::size_t workers, double bandwidth_gbps,
                           std::string& fabric) const;
};

}  // namespace dynamix
