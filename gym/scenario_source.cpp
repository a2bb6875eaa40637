// Domain randomization: seeded samples of cluster size, GPU mix, NIC speed, loss, background
// traffic, workload and optimizer around a base scenario.
#include "gym/scenario_source.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "gym/env_error.h"
#include "sim/cluster/fabric_generator.h"
#include "sim/core/random.h"
#include "sim/io/config_node.h"
#include "sim/io/config_tree.h"
#include "sim/io/diagnostics.h"
#include "sim/io/sources.h"
#include "sim/scenario/training_run.h"
#include "sim/training/training_options.h"

namespace dynamix {
namespace {

// Background bursts: each step of the trace lasts 5-60 s and takes up to 80% of the NIC (assumed).
constexpr int kBackgroundSteps = 8;
constexpr double kMinBurstSeconds = 5;
constexpr double kMaxBurstSeconds = 60;
constexpr double kMaxBackgroundFraction = 0.8;
constexpr auto kHostLatency = std::chrono::microseconds(2);

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

/// An integer drawn log-uniformly from [low, high].
int log_uniform(Rng& rng, int low, int high) {
  const double drawn = std::exp(rng.uniform(std::log(low), std::log(high + 1.0)));
  return std::clamp(static_cast<int>(drawn), low, high);
}

/// One to three of `gpus` with random shares that sum to 1.
std::vector<GpuShare> gpu_mix(Rng& rng, const std::vector<GpuSpec>& gpus) {
  std::vector<std::size_t> order(gpus.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const std::size_t kinds = 1 + rng.below(std::min<std::size_t>(3, gpus.size()));
  std::vector<GpuShare> mix;
  double total = 0;
  for (std::size_t k = 0; k < kinds; ++k) {
    std::swap(order[k], order[k + rng.below(order.size() - k)]);
    mix.push_back({gpus[order[k]].name, rng.uniform(0.2, 1.0)});
    total += mix.back().fraction;
  }
  for (GpuShare& share : mix) share.fraction /= total;
  return mix;
}

/// EnvError unless `o`'s ranges and probabilities are consistent.
void check_ranges(const SamplerOptions& o) {
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
  if (o.tiers.empty() || std::any_of(o.tiers.begin(), o.tiers.end(),
                                     [](int tiers) { return tiers < 1 || tiers > 3; })) {
    throw EnvError("sampler: tiers: expected a list of 1 (star), 2 (leaf-spine), 3 (fat-tree)");
  }
  if (!(o.max_oversubscription >= 1) || !std::isfinite(o.max_oversubscription)) {
    throw EnvError("sampler: max_oversubscription: expected >= 1, found " +
                   std::to_string(o.max_oversubscription));
  }
  if (!(o.parameter_server_probability >= 0 && o.parameter_server_probability <= 1) ||
      o.max_servers < 1) {
    throw EnvError("sampler: expected parameter_server_probability in [0, 1], max_servers >= 1");
  }
  if (o.max_start_batch != 0 && (o.min_start_batch < 1 || o.max_start_batch < o.min_start_batch)) {
    throw EnvError(
        "sampler: expected 1 <= min_start_batch <= max_start_batch (0: the base's), "
        "found " +
        std::to_string(o.min_start_batch) + " and " + std::to_string(o.max_start_batch));
  }
  if (!(o.reference_budget_factor >= 0) || !std::isfinite(o.reference_budget_factor) ||
      o.reference_batch < 1 || o.reference_max_iterations < 1 ||
      !(o.reference_share > 0 && o.reference_share <= 1)) {
    throw EnvError(
        "sampler: expected reference_budget_factor >= 0, reference_batch >= 1, "
        "reference_max_iterations >= 1 and reference_share in (0, 1]");
  }
}

}  // namespace

ScenarioSampler::ScenarioSampler(SamplerOptions options, Diagnostics& diagnostics)
    : ScenarioSampler(std::move(options), &diagnostics) {}

ScenarioSampler::ScenarioSampler(SamplerOptions options)
    : ScenarioSampler(std::move(options), nullptr) {}

ScenarioSampler::ScenarioSampler(SamplerOptions options, Diagnostics* diagnostics)
    : options_(std::move(options)), catalog_(GpuCatalog::builtin()) {
  const SamplerOptions& o = options_;
  check_ranges(o);
  for (const std::string& name : o.gpu_types) {
    const GpuSpec* gpu = catalog_.find(name);
    if (!gpu) {
      throw EnvError("sampler: gpu_types: unknown GPU type '" + name + "', expected one of " +
                     join(catalog_.names()));
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
  base_ = std::make_shared<const Scenario>(diagnostics
                                               ? load_scenario(o.base, o.overrides, *diagnostics)
                                               : load_scenario(o.base, o.overrides));
}

Topology ScenarioSampler::sample_topology(Rng& rng, std::size_t workers, double bandwidth_gbps,
                                          std::string& fabric) const {
  const int tiers = options_.tiers[rng.below(options_.tiers.size())];
  if (tiers == 1) {
    const double loss_rate = rng.uniform(0, options_.max_loss_rate);
    std::vector<NodeSpec> hosts;
    for (std::size_t w = 0; w < workers; ++w) {
      hosts.push_back(worker_node("worker-" + std::to_string(w), gpus_[rng.below(gpus_.size())]));
    }
    fabric = "star";
    return Topology::star(std::move(hosts), {bandwidth_gbps, kHostLatency, loss_rate});
  }
  FabricShape shape;
  shape.kind = tiers == 3 ? FabricKind::kFatTree : FabricKind::kLeafSpine;
  shape.nodes = workers;
  shape.hosts_per_leaf = std::size_t{8} << rng.below(3);
  shape.oversubscription = rng.uniform(1, options_.max_oversubscription);
  shape.host_bandwidth_gbps = bandwidth_gbps;
  shape.gpus = gpu_mix(rng, gpus_);
  fabric = (tiers == 3 ? "fat-tree" : "leaf-spine") + std::string(", oversubscription ") +
           std::to_string(shape.oversubscription);
  return fabric_topology("sampled", shape, catalog_);
}

namespace {

/// Draws the workload (or keeps `base`'s when `workloads` is empty) and the optimizer (when
/// `optimizers` is not empty, with its default LR rule); a drawn workload brings its own target.
void draw_workload(Rng& rng, const std::vector<Workload>& workloads,
                   const std::vector<Optimizer>& optimizers, const Workload& base,
                   ScenarioSpec& spec) {
  spec.workload = workloads.empty() ? base : workloads[rng.below(workloads.size())];
  if (!optimizers.empty()) {
    const Optimizer optimizer = optimizers[rng.below(optimizers.size())];
    if (optimizer != spec.training.optimizer) spec.training.lr_rule = default_lr_rule(optimizer);
    spec.training.optimizer = optimizer;
  }
  if (spec.workload.name != base.name) {
    spec.training.target_accuracy = spec.workload.statistics.target_accuracy;
  }
}

/// Sets `spec`'s target and time budget from a reference job on it (SamplerOptions'
/// reference_* fields) and records them with the reference's time to that target in
/// `spec.resolved`; leaves `spec` as it is where the reference completed no epoch.
void fit_to_reference(const SamplerOptions& options, std::uint64_t seed, ScenarioSpec& spec) {
  ScenarioSpec probe = spec;
  probe.training.budget_time_s.reset();
  const Scenario scenario(std::move(probe));
  TrainingRun run(scenario, seed);
  std::vector<int> batches(run.workers());
  for (std::size_t w = 0; w < batches.size(); ++w) {
    batches[w] = std::min(options.reference_batch, run.max_batch(w));
  }
  // The noise-free accuracy at each completed epoch, and when.
  std::vector<std::pair<double, double>> epochs;
  const double target = spec.training.target_accuracy;
  while (!run.budget_exhausted()) {
    if (!run.step(batches).validation_accuracy) continue;
    epochs.emplace_back(to_seconds(run.now()), run.expected_accuracy());
    if (epochs.back().second >= target) break;
    if (run.iterations() >= options.reference_max_iterations && epochs.size() >= 2) break;
  }
  if (epochs.empty()) return;
  double best = 0;
  for (const auto& [time_s, accuracy] : epochs) best = std::max(best, accuracy);
  const double reachable = best >= target ? target : options.reference_share * best;
  const auto first = std::find_if(epochs.begin(), epochs.end(),
                                  [&](const auto& epoch) { return epoch.second >= reachable; });
  spec.training.target_accuracy = reachable;
  spec.training.budget_time_s = options.reference_budget_factor * first->first;
  spec.resolved = spec.resolved.with("reference_time_s", first->first)
                      .with("target_accuracy", reachable)
                      .with("budget_time_s", *spec.training.budget_time_s);
}

}  // namespace

ScenarioList::ScenarioList(std::vector<std::shared_ptr<const Scenario>> scenarios)
    : scenarios_(std::move(scenarios)) {
  if (scenarios_.empty())
    throw EnvError("ScenarioList: expected at least one scenario, found none");
}

SamplerOptions training_family(const std::string& base, const std::vector<std::string>& overrides,
                               double reference_budget_factor) {
  SamplerOptions family;
  family.base = base;
  family.overrides = overrides;
  const WorkloadCatalog catalog = WorkloadCatalog::builtin();
  for (const Workload& workload : catalog.all()) family.workloads.push_back(workload.name);
  family.optimizers = {"sgd", "adam"};
  family.reference_budget_factor = reference_budget_factor;
  return family;
}

std::shared_ptr<const Scenario> ScenarioSampler::scenario_for(std::uint64_t seed) const {
  Rng rng(seed, stream_id("scenario-sampler"));
  ScenarioSpec spec = base_->spec();
  const auto workers =
      static_cast<std::size_t>(log_uniform(rng, options_.min_workers, options_.max_workers));
  const double bandwidth_gbps = std::exp(
      rng.uniform(std::log(options_.min_bandwidth_gbps), std::log(options_.max_bandwidth_gbps)));
  std::string fabric;
  spec.topology = sample_topology(rng, workers, bandwidth_gbps, fabric);
  if (rng.bernoulli(options_.parameter_server_probability)) {
    spec.sync.architecture = SyncArchitecture::kParameterServer;
    spec.sync.servers =
        1 + static_cast<int>(rng.below(static_cast<std::uint64_t>(options_.max_servers)));
  }
  // A sample never has more (colocated) parameter servers than workers.
  if (spec.sync.architecture == SyncArchitecture::kParameterServer) {
    spec.sync.servers =
        static_cast<int>(std::min<std::size_t>(spec.sync.servers.value_or(1), workers));
  }
  if (options_.max_start_batch > 0) {
    spec.batch_size = log_uniform(rng, options_.min_start_batch, options_.max_start_batch);
  }

  spec.traces.clear();
  std::string background = "none";
  if (fabric == "star" && rng.bernoulli(options_.background_probability)) {
    const std::size_t victim = rng.below(workers);
    const std::string host = "worker-" + std::to_string(victim);
    const auto link = spec.topology.find_link("switch", host);
    spec.traces.push_back({*link, "sampled", background_trace(rng, bandwidth_gbps)});
    background = "switch -> " + host;
  }

  if (!workloads_.empty() || !optimizers_.empty()) {
    draw_workload(rng, workloads_, optimizers_, base_->workload, spec);
  }

  spec.name = base_->name + "-sample-" + std::to_string(seed);
  spec.resolved =
      ConfigTree()
          .with("base", options_.base)
          .with("seed", seed)
          .with("workers", std::uint64_t{workers})
          .with("fabric", fabric)
          .with("bandwidth_gbps", bandwidth_gbps)
          .with("sync",
                spec.sync.architecture == SyncArchitecture::kParameterServer ? "ps" : "ring")
          .with("batch_size", static_cast<std::uint64_t>(spec.batch_size))
          .with("background", background)
          .with("workload", spec.workload.name)
          .with("optimizer", to_string(spec.training.optimizer));
  if (options_.reference_budget_factor > 0) fit_to_reference(options_, seed, spec);
  return std::make_shared<const Scenario>(std::move(spec));
}

}  // namespace dynamix
