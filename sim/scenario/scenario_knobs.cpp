// The scenario's knob tables: one row per key, and the typed readers the rows are made of.
#include "sim/scenario/scenario_knobs.h"

#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "sim/cluster/gpu_catalog.h"
#include "sim/io/closest_name.h"
#include "sim/io/config_node.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/scenario/scenario.h"

namespace dynamix {
namespace {

using Rows = KnobRows<ScenarioSpec>;

constexpr Range kPositive{.low = 0, .low_open = true};
constexpr Range kNonNegative{.low = 0};
constexpr Range kFraction{.low = 0, .high = 1, .high_open = true};
constexpr Range kOpenUnit{.low = 0, .low_open = true, .high = 1, .high_open = true};

/// Free text kept only in the resolved scenario (a description): checked to be text, not kept.
ScenarioKnob described_text(KnobText description) {
  ScenarioKnob knob = Rows::described(std::move(description), "text", "text");
  const std::string name = knob.key;
  knob.read = [name](const ConfigNode& section, ScenarioSpec&) {
    if (const auto child = section.find(name)) child->as_text();
  };
  knob.show = [name](const ScenarioSpec& spec) {
    return spec.resolved.text(name).value_or("none");
  };
  return knob;
}

/// A key the scenario loader reads itself (it refers to other files); listed, not read here.
ScenarioKnob structured(KnobText text, std::string type, std::string range,
                        std::function<std::string(const ScenarioSpec&)> show) {
  ScenarioKnob knob = Rows::described(std::move(text), std::move(type), std::move(range));
  knob.show = std::move(show);
  return knob;
}

ScenarioKnob workload_knob() {
  ScenarioKnob knob =
      Rows::described({.key = "workload",
                       .meaning = "the model and dataset trained, from the workload catalog "
                                  "(dynamix workloads)",
                       .source = "catalog/workloads.yaml",
                       .default_value = "required"},
                      "text", "a workload of the catalog");
  knob.read = [](const ConfigNode& section, ScenarioSpec& spec) {
    const ConfigNode node = section.at("workload");
    const std::string name = node.as_text();
    for (const Workload& declared : spec.workloads) {
      if (declared.name == name) {
        spec.workload = declared;
        return;
      }
    }
    const WorkloadCatalog catalog = WorkloadCatalog::builtin();
    const Workload* workload = catalog.find(name);
    if (workload == nullptr) {
      std::string names = catalog.names();
      std::vector<std::string> candidates;
      for (const Workload& known : catalog.all()) candidates.push_back(known.name);
      for (const Workload& declared : spec.workloads) {
        names += ", " + declared.name;
        candidates.push_back(declared.name);
      }
      node.fail("one of " + names,
                "unknown workload '" + name + "'" + did_you_mean(name, candidates));
    }
    spec.workload = *workload;
  };
  knob.violation = [](const ScenarioSpec& spec) -> std::optional<std::string> {
    if (!spec.workload.name.empty() && spec.workload.dataset_size > 0) return std::nullopt;
    return "none";
  };
  knob.show = [](const ScenarioSpec& spec) { return spec.workload.name; };
  return knob;
}

/// Adds `declared` to `known`, each replacing an entry of the same name.
template <typename Entry>
void declare_entries(std::vector<Entry>& known, std::vector<Entry> declared) {
  for (Entry& entry : declared) {
    std::erase_if(known, [&](const Entry& old) { return old.name == entry.name; });
    known.push_back(std::move(entry));
  }
}

template <typename Entry>
std::string entry_names(const std::vector<Entry>& entries) {
  std::string names;
  for (const Entry& entry : entries) names += (names.empty() ? "" : ", ") + entry.name;
  return names.empty() ? std::string("none") : names;
}

/// The scenario's own device or workload map, read by `read_map` into the spec's `list`.
template <typename Read, typename Access>
ScenarioKnob catalog_map(KnobText text, Read read_map, Access list) {
  ScenarioKnob knob =
      Rows::described(std::move(text), "map", "NAME: {keys of docs/calibration.md}");
  const std::string name = knob.key;
  knob.read = [name, read_map, list](const ConfigNode& section, ScenarioSpec& spec) {
    if (const auto map = section.find(name)) declare_entries(list(spec), read_map(*map));
  };
  knob.show = [list](const ScenarioSpec& spec) { return entry_names(list(spec)); };
  return knob;
}

/// The rows of several lists, in order.
std::vector<ScenarioKnob> joined(std::vector<std::vector<ScenarioKnob>> lists) {
  std::vector<ScenarioKnob> rows;
  for (std::vector<ScenarioKnob>& list : lists) {
    for (ScenarioKnob& knob : list) rows.push_back(std::move(knob));
  }
  return rows;
}

/// The scenario's own catalog: a catalog file, devices and workloads.
std::vector<ScenarioKnob> catalog_knobs() {
  return {structured({.key = "catalog",
                      .meaning = "a file of devices: and workloads: maps (relative to the "
                                 "scenario), read before the scenario's own",
                      .default_value = "none"},
                     "file", "a YAML file with devices: and workloads: maps",
                     [](const ScenarioSpec& spec) {
                       return spec.resolved.text("catalog").value_or("none");
                     }),
          catalog_map(
              {.key = "devices",
               .meaning = "compute devices beside the built-in GPUs (a CPU rank, a "
                          "measured GPU): NAME -> kind, memory_gb, time_points or model "
                          "parameters, source; topology nodes name them in gpu:",
               .source = "the user's measurements (dynamix calibrate)",
               .default_value = "none"},
              GpuCatalog::read_devices, [](auto& spec) -> auto& { return spec.devices; }),
          catalog_map(
              {.key = "workloads",
               .meaning = "workloads beside the built-in ones (dynamix workloads): NAME -> "
                          "the keys of a catalog/workloads.yaml entry",
               .source = "the user's model and dataset",
               .default_value = "none"},
              WorkloadCatalog::read_workloads, [](auto& spec) -> auto& { return spec.workloads; })};
}

/// Other jobs' flows on the fabric; the loader reads the list itself (it names the topology's
/// links and hosts).
ScenarioKnob colocated_jobs_knob() {
  return structured(
      {.key = "colocated_jobs",
       .meaning = "other jobs' traffic on the fabric, as flows sharing links max-min fairly: a "
                  "list of {from, to, rate_gbps, mean_on_s, mean_off_s}; from/to name a link or "
                  "two hosts; each job alternates exponential off and on periods (deterministic "
                  "per seed) and while on sends rate_gbps x its period's length, at most at "
                  "rate_gbps",
       .source = "on/off traffic as measured in data centres (Benson et al., IMC'10: ON/OFF "
                 "flows with heavy-tailed periods); rates and periods are the scenario's own, "
                 "assumed",
       .default_value = "none"},
      "list", "links or host pairs of the topology; rates and periods above 0",
      [](const ScenarioSpec& spec) {
        std::string jobs;
        for (const ColocatedJob& job : spec.colocated_jobs) {
          jobs += (jobs.empty() ? "" : ", ") + job.from + "->" + job.to + "@" +
                  format_number(job.rate_gbps) + "Gb/s";
        }
        return jobs.empty() ? std::string("none") : jobs;
      });
}

ScenarioKnobTable top_level() {
  return Rows::table(
      "", "the scenario itself",
      joined(
          {{Rows::text(
                {.key = "name",
                 .meaning = "the scenario's name in outputs",
                 .default_value = "the file's name without .yaml"},
                [](auto& spec) -> auto& { return spec.name; }),
            described_text({.key = "description",
                            .meaning = "what the scenario shows; its first line is listed by "
                                       "dynamix scenarios",
                            .default_value = "none"}),
            structured({.key = "topology",
                        .meaning = "the cluster: a topology file (relative to the scenario) or an "
                                   "inline map, with the keys of the topology tables; --set "
                                   "topology.KEY=VALUE edits it (docs/simulator.md)",
                        .default_value = "required"},
                       "file or map", "a topology with at least one GPU node",
                       [](const ScenarioSpec& spec) { return spec.topology.name(); }),
            structured({.key = "traces",
                        .meaning = "background traffic: a list of {from, to, file, repeat}, each a "
                                   "link of the topology and a CSV of time_s,background_gbps",
                        .default_value = "none"},
                       "list", "links of the topology",
                       [](const ScenarioSpec& spec) {
                         std::string files;
                         for (const TraceAttachment& trace : spec.traces) {
                           files += (files.empty() ? "" : ", ") + trace.file;
                         }
                         return files.empty() ? std::string("none") : files;
                       }),
            colocated_jobs_knob()},
           catalog_knobs(),
           {Rows::quantity(
                {.key = "batch_size",
                 .unit = "samples",
                 .meaning = "per-worker batch when the command line gives none"},
                [](auto& spec) -> auto& { return spec.batch_size; },
                integers(1, std::numeric_limits<int>::max())),
            Rows::quantity(
                {.key = "iterations",
                 .meaning = "stop after this many iterations even if the budget is not spent"},
                [](auto& spec) -> auto& { return spec.max_iterations; }, integers(1)),
            Rows::quantity(
                {.key = "seed", .meaning = "seed of every random stream of the run"},
                [](auto& spec) -> auto& { return spec.seed; }, integers(0))}}));
}

/// The training values that follow others when absent: the LR rule the optimizer's, the target
/// and budget the workload's.
void complete_training(const ConfigNode* section, ScenarioSpec& spec) {
  TrainingOptions& options = spec.training;
  const StatisticalModel& statistics = spec.workload.statistics;
  if (section != nullptr && section->has("gradient_statistic_noise_floor") &&
      !statistics.gradient_statistic_noise_samples) {
    section->at("gradient_statistic_noise_floor")
        .fail("gradient_statistic_noise_samples beside it (the floor of a batch-dependent noise)",
              "a floor alone");
  }
  if (section == nullptr || !section->has("lr_rule")) {
    options.lr_rule = default_lr_rule(options.optimizer);
  }
  if (section == nullptr || !section->has("target_accuracy")) {
    options.target_accuracy = spec.workload.statistics.target_accuracy;
  }
  if (!options.budget_epochs && !options.budget_time_s) {
    options.budget_epochs = spec.workload.statistics.reference_epochs;
  }
}

/// How the job validates, and the host work after the synchronization that a real worker times
/// as communication although no byte moves.
std::vector<ScenarioKnob> measurement_knobs() {
  return {
      Rows::quantity(
          {.key = "validation_noise",
           .meaning = "standard deviation of measured validation accuracy",
           .default_value = "sqrt(a(1-a)/n) of the workload's validation set"},
          [](auto& spec) -> auto& { return spec.training.validation_noise; }, kNonNegative),
      Rows::quantity(
          {.key = "validations_per_epoch",
           .meaning = "validations an epoch, evenly spaced in samples; time to target is read "
                      "at them",
           .default_value = "1 (at epoch ends)"},
          [](auto& spec) -> auto& { return spec.training.validations_per_epoch; },
          integers(1, 1000)),
      Rows::duration(
          {.key = "step_overhead_us",
           .unit = "us",
           .meaning = "host work after the gradient synchronization that does not depend on the "
                      "batch (optimizer step, loss read-back, the job's bookkeeping), paid every "
                      "iteration; reported within comm_s, as the worker package times it",
           .source = "assumed 0; scripts/sim_to_real.py fits it to a real job's iterations"},
          [](auto& spec) -> auto& { return spec.training.step_overhead; }, 1e-6, true)};
}

/// How noisy a window's gradient statistics are, over the workload's own values: what makes the
/// noise-scale estimate a rule reads as noisy as a real job's.
std::vector<ScenarioKnob> statistic_noise_knobs() {
  constexpr Range kSpread{.low = 0, .high = 5};
  const std::string measured =
      "the workload's; the reference job measured 2.84 at 64 samples a worker over a floor of "
      "1.44 (docs/sim_to_real.md)";
  return {Rows::quantity(
              {.key = "gradient_statistic_noise",
               .meaning = "log-normal spread of each iteration's measured gradient variance, the "
                          "noise of the per-window noise-scale estimate; with "
                          "gradient_statistic_noise_samples n, the spread at n samples a worker",
               .source = measured,
               .default_value = "the workload's"},
              [](auto& spec) -> auto& { return spec.workload.statistics.gradient_statistic_noise; },
              kSpread),
          Rows::quantity(
              {.key = "gradient_statistic_noise_samples",
               .unit = "samples",
               .meaning = "per-worker batch n at which gradient_statistic_noise is the sampling "
                          "part of the spread, which then falls as sqrt(n / batch)",
               .source = measured,
               .default_value = "the workload's (none: the spread does not depend on the batch)"},
              [](auto& spec) -> auto& {
                return spec.workload.statistics.gradient_statistic_noise_samples;
              },
              Range{.low = 1, .high = 1e9}),
          Rows::quantity(
              {.key = "gradient_statistic_noise_floor",
               .meaning = "spread that remains at any batch (the estimator's own), beside "
                          "gradient_statistic_noise_samples; the spread is sqrt(floor^2 + "
                          "noise^2 * n / batch), at most 5",
               .source = measured,
               .default_value = "the workload's"},
              [](auto& spec) -> auto& {
                return spec.workload.statistics.gradient_statistic_noise_floor;
              },
              kSpread)};
}

ScenarioKnobTable training() {
  ScenarioKnobTable knobs = Rows::table(
      "training", "the job: workload, optimizer, learning-rate rule, target and budget",
      joined({{workload_knob(),
               Rows::choice<Optimizer>(
                   {.key = "optimizer",
                    .meaning = "optimizer; sets the bytes of optimizer state per parameter "
                               "(4 for SGD momentum, 8 for Adam)"},
                   [](auto& spec) -> auto& { return spec.training.optimizer; },
                   {{"sgd", Optimizer::kSgd}, {"adam", Optimizer::kAdam}}, "optimizer"),
               Rows::choice<LrRule>(
                   {.key = "lr_rule",
                    .meaning = "how the learning rate follows the global batch",
                    .source = "Goyal et al. 2017 (linear), Malladi et al. 2022 (sqrt)",
                    .default_value = "the optimizer's (sgd: linear, adam: sqrt)"},
                   [](auto& spec) -> auto& { return spec.training.lr_rule; },
                   {{"none", LrRule::kNone},
                    {"linear", LrRule::kLinear},
                    {"sqrt", LrRule::kSqrt},
                    {"adascale", LrRule::kAdaScale}},
                   "LR rule"),
               Rows::choice<Precision>(
                   {.key = "precision",
                    .meaning = "fp32, or mixed precision (fp16 activations, half the activation "
                               "memory); the GPU compute model is fitted to mixed-precision runs",
                    .source = "Micikevicius et al., Mixed Precision Training, ICLR'18"},
                   [](auto& spec) -> auto& { return spec.training.precision; },
                   {{"fp32", Precision::kFp32}, {"mixed", Precision::kMixed}}, "precision"),
               Rows::quantity(
                   {.key = "target_accuracy",
                    .meaning = "validation accuracy that ends a time-to-accuracy run",
                    .default_value = "the workload's"},
                   [](auto& spec) -> auto& { return spec.training.target_accuracy; }, kOpenUnit),
               Rows::quantity(
                   {.key = "budget_epochs",
                    .unit = "epochs",
                    .meaning = "the run stops after this many epochs",
                    .default_value = "the workload's reference epochs when no budget is given"},
                   [](auto& spec) -> auto& { return spec.training.budget_epochs; }, kPositive),
               Rows::quantity(
                   {.key = "budget_time_s",
                    .unit = "s",
                    .meaning = "the run stops after this much simulated time",
                    .default_value = "none"},
                   [](auto& spec) -> auto& { return spec.training.budget_time_s; }, kPositive)},
              measurement_knobs(),
              statistic_noise_knobs()}));
  knobs.complete = complete_training;
  return knobs;
}

ScenarioKnob with_typical(ScenarioKnob knob, Typical typical) {
  knob.typical = std::move(typical);
  return knob;
}

/// What a collective costs beyond moving bytes, and how DDP overlaps it with the backward pass.
std::vector<ScenarioKnob> sync_cost_knobs() {
  return {
      Rows::duration(
          {.key = "call_overhead_us",
           .unit = "us",
           .meaning = "fixed cost of one collective call (enqueue, rendezvous, completion), "
                      "once per all-reduce or per DDP bucket",
           .source = "assumed 0; fit it with dynamix calibrate"},
          [](auto& spec) -> auto& { return spec.sync.call_overhead; }, 1e-6, true),
      Rows::quantity(
          {.key = "reduction_gbps",
           .unit = "Gb/s",
           .meaning = "throughput of the reduction arithmetic, in gradient bits summed per "
                      "second (0: free); a ring rank reduces (p-1)/p of the gradient",
           .source = "assumed 0; fit it with dynamix calibrate (gloo sums on CPU cores)"},
          [](auto& spec) -> auto& { return spec.sync.reduction_gbps; }, kNonNegative),
      Rows::quantity(
          {.key = "bucket_mb",
           .unit = "MiB",
           .meaning = "DDP gradient bucket: each bucket is all-reduced as soon as the "
                      "backward pass has produced it, overlapping compute (0: one "
                      "all-reduce after the backward pass)",
           .source = "PyTorch DistributedDataParallel bucket_cap_mb (25 by default); Li et "
                     "al., PyTorch Distributed, VLDB'20"},
          [](auto& spec) -> auto& { return spec.sync.bucket_bytes; }, kNonNegative,
          1024.0 * 1024.0),
      Rows::quantity(
          {.key = "backward_fraction",
           .meaning = "share of a worker's compute time spent in the backward pass",
           .source = "backward costs ~2x forward (Kaplan et al. 2020, 6N FLOPs per token of "
                     "which 4N backward)"},
          [](auto& spec) -> auto& { return spec.sync.backward_fraction; }, kOpenUnit),
      Rows::duration(
          {.key = "bucket_overhead_us",
           .unit = "us",
           .meaning = "DDP's own work per gradient bucket (autograd hooks, copies into and out "
                      "of the bucket), paid in training iterations, not by a bare collective",
           .source = "assumed 0; fit it with dynamix calibrate on DDP iterations"},
          [](auto& spec) -> auto& { return spec.sync.bucket_overhead; }, 1e-6, true),
      with_typical(
          Rows::quantity(
              {.key = "intra_node_gbps",
               .unit = "Gb/s",
               .meaning = "bus bandwidth among one node's GPUs: a node of g GPUs all-reduces "
                          "2(g-1)/g of the gradient at this rate before the nodes synchronize "
                          "(0: free)",
               .source = "nccl-tests bus bandwidth convention; measure with all_reduce_perf on "
                         "one node; typical <= 14400 Gb/s: NVLink 5 moves 1.8 TB/s a GPU (NVLink "
                         "4: 900 GB/s = 7200 Gb/s)"},
              [](auto& spec) -> auto& { return spec.sync.intra_node_gbps; }, kNonNegative),
          {.high = 14400, .above = "above any NVLink we know", .slips = {1e3, 1e6, 1e9}})};
}

ScenarioKnobTable sync() {
  return Rows::table(
      "sync", "gradient synchronization",
      joined(
          {{Rows::choice<SyncArchitecture>(
                {.key = "architecture", .meaning = "ring all-reduce or parameter server"},
                [](auto& spec) -> auto& { return spec.sync.architecture; },
                {{"ring", SyncArchitecture::kRing}, {"ps", SyncArchitecture::kParameterServer}},
                "architecture"),
            Rows::choice<RingModel>(
                {.key = "ring_model",
                 .meaning = "collective: one coupled transfer of 2(p-1)/p of the "
                            "gradient; per_step: the ring's 2(p-1) steps one by one"},
                [](auto& spec) -> auto& { return spec.sync.ring_model; },
                {{"collective", RingModel::kCollective}, {"per_step", RingModel::kPerStep}},
                "ring model"),
            Rows::quantity(
                {.key = "servers",
                 .meaning = "parameter servers; BytePS shards the gradient evenly over them",
                 .source = "BytePS (Jiang et al., OSDI'20)",
                 .default_value = "every server node of the topology, else 1 on the first worker"},
                [](auto& spec) -> auto& { return spec.sync.servers; },
                integers(1, std::numeric_limits<int>::max())),
            Rows::duration(
                {.key = "message_overhead_us",
                 .unit = "us",
                 .meaning = "software latency per message (NCCL/BytePS launch and protocol)",
                 .source = "assumed"},
                [](auto& spec) -> auto& { return spec.sync.message_overhead; }, 1e-6, true)},
           sync_cost_knobs()}));
}

/// The spec's network field `member`.
template <typename Member>
auto network_field(Member member) {
  return [member](auto& spec) -> auto& { return spec.network.*member; };
}

/// TCP's own parameters: segment, window, timeout, ACKs.
std::vector<ScenarioKnob> tcp_knobs() {
  const auto field = [](auto member) { return network_field(member); };
  return {Rows::quantity({.key = "mss_bytes",
                          .unit = "bytes",
                          .meaning = "TCP maximum segment size",
                          .source = "1500-byte Ethernet MTU less 40 bytes of IPv4 and TCP headers"},
                         field(&NetworkOptions::mss_bytes), kPositive),
          Rows::quantity({.key = "max_window_kb",
                          .unit = "KiB",
                          .meaning = "largest TCP window W_max of the rate cap W_max / RTT",
                          .source = "SimGrid's network/TCP-gamma"},
                         field(&NetworkOptions::max_window_bytes), kPositive, 1024),
          Rows::duration({.key = "min_rto_ms",
                          .unit = "ms",
                          .meaning = "smallest retransmission timeout",
                          .source = "Linux TCP_RTO_MIN"},
                         field(&NetworkOptions::min_rto), 1e-3, false),
          Rows::quantity({.key = "segments_per_ack",
                          .unit = "segments",
                          .meaning = "segments acknowledged per ACK (Padhye's b)",
                          .source = "delayed ACKs, RFC 1122 and RFC 5681"},
                         field(&NetworkOptions::segments_per_ack), Range{.low = 1}),
          Rows::choice<LossRecovery>(
              {.key = "loss_recovery",
               .meaning = "which losses end in a retransmission timeout: reno (Padhye's "
                          "Q = min(1, 3/E[W]), a stack without SACK) or sack (only a loss whose "
                          "retransmission is lost too, Q = p^2: SACK with RACK-TLP, Linux >= "
                          "4.18)",
               .source = "Padhye et al., SIGCOMM'98; RFC 8985; scripts/tcp_study.py "
                         "(docs/network.md)",
               .default_value = "reno"},
              field(&NetworkOptions::loss_recovery),
              {{"reno", LossRecovery::kReno}, {"sack", LossRecovery::kSack}}, "loss recovery"),
          Rows::quantity(
              {.key = "initial_window_segments",
               .unit = "segments",
               .meaning = "initial congestion window: each sender's burst in an incast round",
               .source = "RFC 6928"},
              field(&NetworkOptions::initial_window_segments), kPositive)};
}

ScenarioKnobTable network() {
  const auto field = [](auto member) { return network_field(member); };
  return Rows::table(
      "network", "flow-level TCP model of every transfer",
      joined(
          {tcp_knobs(),
           {Rows::quantity(
                {.key = "switch_buffer_kb",
                 .unit = "KiB",
                 .meaning = "egress buffer per switch port",
                 .source = "4 MiB shared by 48 ports, Broadcom Triumph (Alizadeh et al., "
                           "DCTCP, SIGCOMM'10)"},
                field(&NetworkOptions::switch_buffer_bytes), kPositive, 1024),
            Rows::flag(
                {.key = "incast",
                 .meaning = "whether synchronized senders into one port pay incast timeouts"},
                field(&NetworkOptions::incast)),
            Rows::quantity({.key = "min_available_fraction",
                            .meaning = "background traffic never leaves less of a link's capacity",
                            .source = "assumed"},
                           field(&NetworkOptions::min_available_fraction),
                           Range{.low = 0, .low_open = true, .high = 1}),
            Rows::quantity(
                {.key = "frame_overhead_bytes",
                 .unit = "bytes",
                 .meaning = "wire bytes per segment beyond its payload; payload gets "
                            "mss/(mss + overhead) of the line rate (0: line rate)",
                 .source = "78 = IPv4 + TCP headers (40) + Ethernet header, FCS, preamble and "
                           "inter-frame gap (38): 94.9% at MTU 1500 (IEEE 802.3, RFC 791/793)"},
                field(&NetworkOptions::frame_overhead_bytes), kNonNegative),
            Rows::quantity(
                {.key = "transport_efficiency",
                 .meaning = "fraction of the framed line rate the transport reaches (1: ideal)",
                 .source = "kernel TCP sockets rarely exceed ~0.6 of wire speed (NCCL "
                           "maintainers, NVIDIA/nccl issues); RDMA ~0.96 of bus bandwidth "
                           "(nccl-tests)"},
                field(&NetworkOptions::transport_efficiency),
                Range{.low = 0, .low_open = true, .high = 1})}}));
}

/// The spec's variability field `member`.
template <typename Member>
auto variability_field(Member member) {
  return [member](auto& spec) -> auto& { return spec.variability.*member; };
}

/// Straggler episodes: how often, how slow, how long, and how they build up and fade.
std::vector<ScenarioKnob> straggler_knobs() {
  const auto field = [](auto member) { return variability_field(member); };
  const Range seconds{.low = 0, .high = 1e6};
  return {
      Rows::quantity({.key = "straggler_rate_per_hour",
                      .unit = "1/h",
                      .meaning = "straggler episodes per worker per simulated hour (Poisson)",
                      .source = "assumed; the Alibaba PAI trace shows stragglers mid-run"},
                     field(&VariabilityOptions::straggler_rate_per_hour),
                     Range{.low = 0, .high = 3600}),
      Rows::quantity({.key = "straggler_slowdown",
                      .unit = "x",
                      .meaning = "slowdown during a straggler episode",
                      .source = "assumed"},
                     field(&VariabilityOptions::straggler_slowdown), Range{.low = 1, .high = 1000}),
      Rows::quantity({.key = "straggler_mean_duration_s",
                      .unit = "s",
                      .meaning = "mean length of an episode at full slowdown, exponentially "
                                 "distributed",
                      .source = "assumed"},
                     field(&VariabilityOptions::straggler_mean_duration_s),
                     Range{.low = 0, .low_open = true, .high = 1e6}),
      Rows::quantity({.key = "straggler_onset_s",
                      .unit = "s",
                      .meaning = "precursor of an episode: the slowdown grows linearly from 1 to "
                                 "straggler_slowdown over this long before it (0: a step)",
                      .source = "assumed; GPU clocks fall in steps as the die heats towards "
                                "its slowdown temperature, over tens of seconds to minutes "
                                "(NVIDIA nvidia-smi clocks_throttle_reasons.hw_thermal_slowdown)"},
                     field(&VariabilityOptions::straggler_onset_s), seconds),
      Rows::quantity({.key = "straggler_recovery_s",
                      .unit = "s",
                      .meaning = "the slowdown falls linearly back to 1 over this long after an "
                                 "episode (0: a step)",
                      .source = "assumed, as straggler_onset_s"},
                     field(&VariabilityOptions::straggler_recovery_s), seconds)};
}

ScenarioKnobTable variability() {
  const auto field = [](auto member) { return variability_field(member); };
  const Range sigma{.low = 0, .high = 3};
  const Range slowdown{.low = 1, .high = 1000};
  return Rows::table(
      "variability", "why identical GPUs do not run at identical speed",
      joined(
          {{Rows::quantity(
                {.key = "gpu_spread",
                 .meaning = "log-space standard deviation of each GPU's static speed factor",
                 .source = "Sinha et al., Not All GPUs Are Created Equal, SC'22"},
                field(&VariabilityOptions::gpu_spread), sigma),
            Rows::quantity({.key = "outlier_probability",
                            .meaning = "probability that a GPU is a slow outlier",
                            .source = "assumed; Sinha et al. report rare outliers"},
                           field(&VariabilityOptions::outlier_probability), kFraction),
            Rows::quantity({.key = "outlier_slowdown",
                            .unit = "x",
                            .meaning = "slowdown of an outlier GPU",
                            .source = "Sinha et al., SC'22"},
                           field(&VariabilityOptions::outlier_slowdown), slowdown),
            Rows::quantity({.key = "jitter_sigma",
                            .meaning = "log-space standard deviation of the per-iteration jitter",
                            .source = "assumed"},
                           field(&VariabilityOptions::jitter_sigma), sigma)},
           straggler_knobs(),
           {Rows::quantity({.key = "minimum_factor",
                            .meaning = "lower bound of the combined factor: jitter never makes a "
                                       "GPU twice as fast",
                            .source = "assumed"},
                           field(&VariabilityOptions::minimum_factor),
                           Range{.low = 0, .low_open = true, .high = 1})}}));
}

/// Preemption's timing: when a notice comes, how long before the worker leaves and returns.
std::vector<ScenarioKnob> preemption_timing_knobs() {
  const auto field = [](auto member) {
    return [member](auto& spec) -> auto& { return spec.preemption.*member; };
  };
  return {Rows::quantity({.key = "rate_per_hour",
                          .unit = "1/h",
                          .meaning = "preemption notices per worker per simulated hour (Poisson); "
                                     "0 preempts nobody",
                          .source = "assumed per scenario (spot interruption frequencies vary "
                                    "by region and instance type)"},
                         field(&PreemptionOptions::rate_per_hour), Range{.low = 0, .high = 3600}),
          Rows::quantity({.key = "notice_s",
                          .unit = "s",
                          .meaning = "time between a worker's notice and its departure",
                          .source = "AWS EC2 spot interruption notice: 2 minutes; GCP "
                                    "preemptible/spot VMs: 30 s (provider documentation)"},
                         field(&PreemptionOptions::notice_s), Range{.low = 0, .high = 86400}),
          Rows::flag({.key = "rejoin",
                      .meaning = "whether a preempted worker comes back after its absence"},
                     field(&PreemptionOptions::rejoin)),
          Rows::quantity({.key = "mean_absence_s",
                          .unit = "s",
                          .meaning = "mean time a preempted worker is away before it returns, "
                                     "exponentially distributed",
                          .source = "assumed"},
                         field(&PreemptionOptions::mean_absence_s),
                         Range{.low = 0, .low_open = true, .high = 1e6})};
}

ScenarioKnobTable preemption() {
  ScenarioKnob mode = Rows::choice<PreemptionMode>(
      {.key = "mode",
       .meaning = "elastic: the job continues on the survivors, data re-sharded (the global "
                  "batch is what their batches sum to); pause: it waits until every worker is "
                  "back"},
      [](auto& spec) -> auto& { return spec.preemption.mode; },
      {{"elastic", PreemptionMode::kElastic}, {"pause", PreemptionMode::kPause}},
      "preemption mode");
  return Rows::table(
      "preemption", "workers a cloud provider takes back, with notice, and their return",
      joined({preemption_timing_knobs(),
              {Rows::quantity(
                   {.key = "reconfiguration_s",
                    .unit = "s",
                    .meaning = "time the job stands still each time its membership changes "
                               "(rendezvous, process-group rebuild, state reload); in pause "
                               "mode once when it resumes",
                    .source = "assumed (docs/simulator.md)"},
                   [](auto& spec) -> auto& { return spec.preemption.reconfiguration_s; },
                   Range{.low = 0, .high = 86400}),
               std::move(mode)}}));
}

}  // namespace

const std::vector<ScenarioKnobTable>& scenario_knobs() {
  // Built once: the rows are immutable and hold no state.
  static const std::vector<ScenarioKnobTable> tables = {top_level(), training(),    sync(),
                                                        network(),   variability(), preemption()};
  return tables;
}

}  // namespace dynamix
