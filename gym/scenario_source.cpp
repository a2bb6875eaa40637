// Domain randomization: seeded samples of cluster size, GPU mix, NIC speed, loss, background
// traffic, workload and optimizer around a base scenario.
#include "gym/scenario_source.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "gym/env_error.h"
#include "sim/core/random.h"
#include "sim/io/config_tree.h"
#include "sim/training/training_options.h"

namespace dynamix {
namespace {

// Background bursts: each step of the trace lasts 5-60 s and takes up to 80% of the NIC (assumed).
constexpr int kBackgroundSteps = 8;
constexpr double kMinBurstSeconds = 5;
constexpr double kMaxBurstSeconds = 60;
constexpr double kMaxBackgroundFraction = 0.8;
constexpr auto kHostLatency = std::chrono::microseconds(2);

std::string join(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    if (!text.empty()) text += ", ";
    text += name;
  }
  return text;
}

Optimizer parse_optimizer_name(const std::string& name) {
  if (name == "sgd") return Optimizer::kSgd;
  if (name == "adam") return Optimizer::kAdam;
  throw EnvError("sampler optimizers: expected sgd or adam, found '" + name + "'");
}

BandwidthTrace background_trace(Rng& rng, double bandwidth_gbps) {
  BandwidthTrace trace;
  trace.repeat = true;
  double offset_s = 0;
  for (int i = 0; i < kBackgroundSteps; ++i) {
    trace.steps.push_back(
        {from_seconds(offset_s), rng.uniform(0, kMaxBackgroundFraction) * bandwidth_gbps});
    offset_s += rng.uniform(kMinBurstSeconds, kMaxBurstSeconds);
  }
  // With repeat, the last step only marks the end of the period.
  trace.steps.push_back({from_seconds(offset_s), trace.steps.front().background_gbps});
  return trace;
}

}  // namespace

ScenarioSampler::ScenarioSampler(SamplerOptions options) : options_(std::move(options)) {
  const SamplerOptions& o = options_;
  if (o.min_workers < 1 || o.max_workers < o.min_workers) {
    throw EnvError("sampler: expected 1 <= min_workers <= max_workers, found " +
                   std::to_string(o.min_workers) + " and " + std::to_string(o.max_workers));
  }
  if (!(o.min_bandwidth_gbps > 0) || !(o.max_bandwidth_gbps >= o.min_bandwidth_gbps) ||
      !std::isfinite(o.max_bandwidth_gbps)) {
    throw EnvError("sampler: expected 0 < min_bandwidth_gbps <= max_bandwidth_gbps, found " +
                   std::to_string(o.min_bandwidth_gbps) + " and " +
                   std::to_string(o.max_bandwidth_gbps));
  }
  if (!(o.max_loss_rate >= 0 && o.max_loss_rate < 1)) {
    throw EnvError("sampler: max_loss_rate: expected a value in [0, 1), found " +
                   std::to_string(o.max_loss_rate));
  }
  if (!(o.background_probability >= 0 && o.background_probability <= 1)) {
    throw EnvError("sampler: background_probability: expected a value in [0, 1], found " +
                   std::to_string(o.background_probability));
  }
  if (o.gpu_types.empty()) throw EnvError("sampler: gpu_types: expected at least one GPU type");
  const GpuCatalog catalog = GpuCatalog::builtin();
  for (const std::string& name : o.gpu_types) {
    const GpuSpec* gpu = catalog.find(name);
    if (!gpu) {
      throw EnvError("sampler: gpu_types: unknown GPU type '" + name + "', expected one of " +
                     join(catalog.names()));
    }
    gpus_.push_back(*gpu);
  }
  const WorkloadCatalog workloads = WorkloadCatalog::builtin();
  for (const std::string& name : o.workloads) {
    const Workload* workload = workloads.find(name);
    if (!workload) {
      throw EnvError("sampler: workloads: unknown workload '" + name + "', expected one of " +
                     workloads.names());
    }
    workloads_.push_back(*workload);
  }
  for (const std::string& name : o.optimizers) optimizers_.push_back(parse_optimizer_name(name));
  base_ = std::make_shared<const Scenario>(load_scenario(o.base, o.overrides));
}

std::shared_ptr<const Scenario> ScenarioSampler::scenario_for(std::uint64_t seed) const {
  Rng rng(seed, stream_id("scenario-sampler"));
  ScenarioSpec spec = base_->spec();
  const auto span = static_cast<std::uint64_t>(options_.max_workers - options_.min_workers + 1);
  const std::size_t workers = static_cast<std::size_t>(options_.min_workers) + rng.below(span);
  const double bandwidth_gbps = std::exp(
      rng.uniform(std::log(options_.min_bandwidth_gbps), std::log(options_.max_bandwidth_gbps)));
  const double loss_rate = rng.uniform(0, options_.max_loss_rate);

  std::vector<NodeSpec> hosts;
  std::vector<std::string> gpu_names;
  for (std::size_t w = 0; w < workers; ++w) {
    const GpuSpec& gpu = gpus_[rng.below(gpus_.size())];
    hosts.push_back(worker_node("worker-" + std::to_string(w), gpu));
    gpu_names.push_back(gpu.name);
  }
  spec.topology = Topology::star(std::move(hosts), {bandwidth_gbps, kHostLatency, loss_rate});
  // A sample never has more (colocated) parameter servers than workers.
  if (spec.sync.architecture == SyncArchitecture::kParameterServer) {
    spec.sync.servers =
        static_cast<int>(std::min<std::size_t>(spec.sync.servers.value_or(1), workers));
  }

  spec.traces.clear();
  std::string background = "none";
  if (rng.bernoulli(options_.background_probability)) {
    const std::size_t victim = rng.below(workers);
    const std::string host = "worker-" + std::to_string(victim);
    const auto link = spec.topology.find_link("switch", host);
    spec.traces.push_back({*link, "sampled", background_trace(rng, bandwidth_gbps)});
    background = "switch -> " + host;
  }

  if (!workloads_.empty() || !optimizers_.empty()) {
    spec.workload = workloads_.empty() ? base_->workload : workloads_[rng.below(workloads_.size())];
    if (!optimizers_.empty()) {
      const Optimizer optimizer = optimizers_[rng.below(optimizers_.size())];
      if (optimizer != spec.training.optimizer) spec.training.lr_rule = default_lr_rule(optimizer);
      spec.training.optimizer = optimizer;
    }
    if (spec.workload.name != base_->workload.name) {
      spec.training.target_accuracy = spec.workload.statistics.target_accuracy;
    }
  }

  spec.name = base_->name + "-sample-" + std::to_string(seed);
  spec.resolved = ConfigTree()
                      .with("base", options_.base)
                      .with("seed", seed)
                      .with("workers", std::uint64_t{workers})
                      .with("gpus", gpu_names)
                      .with("bandwidth_gbps", bandwidth_gbps)
                      .with("loss_rate", loss_rate)
                      .with("background", background)
                      .with("workload", spec.workload.name)
                      .with("optimizer", to_string(spec.training.optimizer));
  return std::make_shared<const Scenario>(std::move(spec));
}

}  // namespace dynamix
