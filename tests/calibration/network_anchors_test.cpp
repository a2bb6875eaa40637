// Network anchors: published nccl-tests bus bandwidths of large all-reduces over RDMA and over
// TCP sockets, run through the path `dynamix simulate` takes (a scenario's network knobs, a
// TrainingRun's ring). Each transport's efficiency is fitted to one figure and predicts another.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/scenario/training_run.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

/// Two hosts, one rank each, on one switch; a 1 GiB gradient (268435456 fp32 parameters) and a
/// compute time of a microsecond, so an iteration is the all-reduce.
const std::string kTwoHosts =
    "topology:\n"
    "  switches: [tor]\n"
    "  nodes:\n"
    "    - name: host{i}\n"
    "      count: 2\n"
    "      gpu: probe\n"
    "      cpu_cores: 8\n"
    "      link: {to: tor, bandwidth_gbps: 100, latency_us: 2}\n"
    "devices:\n"
    "  probe: {memory_gb: 80, time_points: [[1, 1.0e-6]], source: a stand-in whose compute is "
    "negligible}\n"
    "workloads:\n"
    "  gradient-1gib: {model: none, dataset: none, parameters: 268435456, flops_per_sample: 1, "
    "activation_bytes_per_sample: 1, cpu_seconds_per_sample: 1.0e-9, dataset_size: 1000, "
    "validation_size: 100, classes: 10, reference_batch: 1, reference_epochs: 1, "
    "final_accuracy: 0.9, final_accuracy_adam: 0.9, final_train_accuracy: 0.9, "
    "initial_loss: 2, final_loss: 1, initial_noise_scale: 1, final_noise_scale: 1, "
    "target_accuracy: 0.5}\n"
    "training: {workload: gradient-1gib}\n"
    "variability: {gpu_spread: 0, outlier_probability: 0, jitter_sigma: 0, "
    "straggler_rate_per_hour: 0}\n";

/// nccl-tests' bus bandwidth (GB/s) of the simulated all-reduce: n/T · 2(p-1)/p, p = 2.
double simulated_busbw_gbytes(const std::vector<std::string>& overrides) {
  const testing::TempDirectory dir;
  const Scenario scenario = load_scenario(dir.write("pair.yaml", kTwoHosts), overrides);
  TrainingRun run(scenario, 1);
  const std::vector<int> batches = {1, 1};
  const double comm_s = run.step(batches).workers[0].comm_s;
  return 1073741824.0 / comm_s / 1e9;
}

struct BusAnchor {
  const char* setup;
  double nic_gbps;
  double published_busbw_gbytes;
  bool fitted;
  const char* source;
};

/// RDMA: framing is inside InfiniBand's data rate; transport_efficiency 0.976 = 12.2 / 12.5.
const std::vector<std::string> kRdma = {"network.transport_efficiency=0.976"};
/// TCP sockets: Ethernet + IPv4 + TCP framing (94.9%) and a transport efficiency of 0.632, so
/// that payload reaches 60% of wire speed.
const std::vector<std::string> kTcp = {"network.frame_overhead_bytes=78",
                                       "network.transport_efficiency=0.632"};

constexpr BusAnchor kRdmaAnchors[] = {
    {"1x EDR InfiniBand 100 Gb/s, 2 nodes x 1 GPU", 100, 12.2, true,
     "NVIDIA/nccl-tests issue #29 (sjeaugey, 2019-12-06): 12.2 GB/s is as good as a 100 Gb/s "
     "card gets"},
    {"4x EDR InfiniBand per node (DGX-1), 2 nodes", 400, 48, false,
     "NVIDIA/nccl-tests issue #29 (sjeaugey): DGX-1 gets 48 GB/s with 4 IB adapters"},
};

constexpr BusAnchor kTcpAnchors[] = {
    {"32 Gb/s Ethernet, NCCL sockets", 32, 0.60 * 32 / 8, true,
     "NVIDIA/nccl issue #209 (cswinter, 2019-04-19): not more than 60% of wire speed over "
     "32 Gbps networks with large messages"},
    {"25 Gb/s Azure VMs, NCCL sockets, 2 hosts x 4 GPUs", 25, 1.7, false,
     "NVIDIA/nccl-tests issue #83 (rahul-bothra, 2021-05-11): all-reduce bus bandwidth maxed "
     "out at 1.7 GB/s on a 25 Gbps VM network"},
};

void check(const BusAnchor& anchor, std::vector<std::string> overrides, double tolerance) {
  CAPTURE(anchor.source);
  overrides.push_back("topology.nodes.0.link.bandwidth_gbps=" + std::to_string(anchor.nic_gbps));
  const double simulated = simulated_busbw_gbytes(overrides);
  MESSAGE((std::string(anchor.setup) + (anchor.fitted ? " (fitted)" : " (predicted)"))
          << ": published " << anchor.published_busbw_gbytes << " GB/s, simulated " << simulated);
  CHECK(std::abs(simulated / anchor.published_busbw_gbytes - 1) <= tolerance);
}

TEST_CASE("large all-reduces over RDMA reach the published nccl-tests bus bandwidth") {
  for (const BusAnchor& anchor : kRdmaAnchors) check(anchor, kRdma, 0.05);
}

TEST_CASE("large all-reduces over TCP sockets reach the published nccl-tests bus bandwidth") {
  for (const BusAnchor& anchor : kTcpAnchors) check(anchor, kTcp, 0.15);
}

TEST_CASE("at line rate the same all-reduce would overstate both transports") {
  // Without the framing and transport terms the pair moves 100 Gb/s of payload: 12.5 GB/s.
  CHECK(simulated_busbw_gbytes({}) == doctest::Approx(12.5).epsilon(0.01));
}

}  // namespace
}  // namespace dynamix
