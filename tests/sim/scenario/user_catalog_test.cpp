// User catalogs: devices (CPU ranks with measured time points) and workloads a scenario declares,
// ranks sharing one machine's cores, and mixed precision's memory.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/cluster/collective.h"
#include "sim/cluster/compute.h"
#include "sim/scenario/scenario.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;
using testing::TempDirectory;

// Line numbers below refer to this text.
const std::string kCpuScenario =
    "topology:\n"                                                       // 1
    "  switches: [loopback]\n"                                          // 2
    "  nodes:\n"                                                        // 3
    "    - name: rank{i}\n"                                             // 4
    "      count: 4\n"                                                  // 5
    "      gpu: epyc-rank\n"                                            // 6
    "      cpu_cores: 2\n"                                              // 7
    "      machine: vm\n"                                               // 8
    "      link: {to: loopback, bandwidth_gbps: 20, latency_us: 10}\n"  // 9
    "devices:\n"                                                        // 10
    "  epyc-rank:\n"                                                    // 11
    "    kind: cpu\n"                                                   // 12
    "    memory_gb: 6\n"                                                // 13
    "    reserved_gb: 0.5\n"                                            // 14
    "    time_points: [[16, 0.010], [64, 0.034], [128, 0.066]]\n"       // 15
    "    source: measured with torch 1.13 on one rank\n"                // 16
    "workloads:\n"                                                      // 17
    "  small-cnn:\n"                                                    // 18
    "    model: cnn\n"                                                  // 19
    "    dataset: synthetic\n"                                          // 20
    "    parameters: 100000\n"                                          // 21
    "    flops_per_sample: 3.0e7\n"                                     // 22
    "    activation_bytes_per_sample: 2.0e5\n"                          // 23
    "    cpu_seconds_per_sample: 1.0e-5\n"                              // 24
    "    dataset_size: 60000\n"                                         // 25
    "    validation_size: 10000\n"                                      // 26
    "    classes: 10\n"                                                 // 27
    "    reference_batch: 64\n"                                         // 28
    "    reference_epochs: 10\n"                                        // 29
    "    final_accuracy: 0.98\n"                                        // 30
    "    final_accuracy_adam: 0.98\n"                                   // 31
    "    final_train_accuracy: 0.99\n"                                  // 32
    "    initial_loss: 2.3\n"                                           // 33
    "    final_loss: 0.05\n"                                            // 34
    "    initial_noise_scale: 50\n"                                     // 35
    "    final_noise_scale: 500\n"                                      // 36
    "    target_accuracy: 0.95\n"                                       // 37
    "training:\n"                                                       // 38
    "  workload: small-cnn\n";                                          // 39

Scenario load(const std::string& text, const std::vector<std::string>& overrides = {}) {
  const TempDirectory dir;
  return load_scenario(dir.write("cpu.yaml", text), overrides);
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

TEST_CASE("a scenario's CPU device computes at its measured time points") {
  CHECK(interpolate_time({{16, 0.01}, {64, 0.034}}, 40) == doctest::Approx(0.022));
  CHECK(interpolate_time({{16, 0.01}, {64, 0.034}}, 112) == doctest::Approx(0.058));
  CHECK(interpolate_time({{16, 0.01}, {64, 0.034}}, 4) == doctest::Approx(0.004));
  CHECK(interpolate_time({{32, 0.02}}, 64) == doctest::Approx(0.04));

  // Two ranks on a 2-core machine have a core each.
  const Scenario two = load(kCpuScenario, {"topology.nodes.0.count=2"});
  const NodeSpec& rank = two.topology.hosts()[0];
  CHECK(rank.gpu_spec.kind == DeviceKind::kCpu);
  CHECK(rank.core_sharing == 1);
  CHECK(compute_seconds(rank, two.cost, 64) == doctest::Approx(0.034));
  CHECK(compute_seconds(rank, two.cost, 96) == doctest::Approx(0.050));
  CHECK(two.workload.name == "small-cnn");
  CHECK(two.workload.cost.parameters == 100000);
}

TEST_CASE("ranks outnumbering their machine's cores compute and send at their share") {
  const Scenario four = load(kCpuScenario);
  const Scenario two = load(kCpuScenario, {"topology.nodes.0.count=2"});
  const NodeSpec& crowded = four.topology.hosts()[0];
  CHECK(crowded.core_sharing == 2);
  CHECK(compute_seconds(crowded, four.cost, 64) == doctest::Approx(2 * 0.034));
  CHECK(four.topology.links()[0].bandwidth_gbps == 10);
  CHECK(two.topology.links()[0].bandwidth_gbps == 20);
}

TEST_CASE("co-located ranks interfere beyond core sharing and wait longer for their peers") {
  const Scenario four = load(
      kCpuScenario, {"devices.epyc-rank.colocation_slowdown=0.13", "sync.message_overhead_us=100"});
  const NodeSpec& crowded = four.topology.hosts()[0];
  CHECK(crowded.machine_ranks == 4);
  CHECK(compute_seconds(crowded, four.cost, 64) == doctest::Approx(0.034 * 2 * 1.39));
  // Ring neighbours are two 10 us links apart; the 100 us software latency doubles at 2 ranks
  // per core.
  Simulator sim;
  Topology topology = four.topology;
  Network network(sim, topology.links(), four.network);
  const Synchronizer sync(sim, network, topology, four.sync, four.worker_hosts, four.server_hosts);
  CHECK(sync.ring_step_latency() == std::chrono::microseconds(20 + 200));
}

TEST_CASE("oversubscribed ranks finish spread around the mean, so the others wait for the last") {
  // 4 ranks on 2 cores: σ·(1 − c/r) = 0.4·0.5 spreads them over 0.8 … 1.2 of the mean.
  const Scenario four = load(kCpuScenario, {"devices.epyc-rank.oversubscription_skew=0.4"});
  std::vector<double> factors;
  for (const NodeSpec& rank : four.topology.hosts()) {
    CHECK(rank.machine_slot == static_cast<int>(factors.size()));
    factors.push_back(compute_seconds(rank, four.cost, 64) / (2 * 0.034));
  }
  REQUIRE(factors.size() == 4);
  CHECK(factors[0] == doctest::Approx(0.8));
  CHECK(factors[1] == doctest::Approx(1 - 0.2 / 3));
  CHECK(factors[3] == doctest::Approx(1.2));
  CHECK((factors[0] + factors[1] + factors[2] + factors[3]) / 4 == doctest::Approx(1));
  // Two ranks on two cores time-share nothing: no spread.
  const Scenario two = load(
      kCpuScenario, {"topology.nodes.0.count=2", "devices.epyc-rank.oversubscription_skew=0.4"});
  CHECK(compute_seconds(two.topology.hosts()[0], two.cost, 64) == doctest::Approx(0.034));
  CHECK(error_of([] {
          load(kCpuScenario, {"devices.epyc-rank.oversubscription_skew=1"});
        }).find("below 1") != std::string::npos);
}

TEST_CASE("a CPU rank's memory bounds its batch after its reserve") {
  const Scenario scenario = load(kCpuScenario);
  const NodeSpec& rank = scenario.topology.hosts()[0];
  // (6 - 0.5) GB less 5% fragmentation, less weights, gradients and momentum, over 200 kB.
  const double free_bytes = 5.5e9 * 0.95 - 100000 * 12;
  CHECK(max_batch(rank, scenario.cost) == static_cast<int>(free_bytes / 2.0e5));
}

TEST_CASE("a catalog file supplies devices and workloads; the scenario's own replace them") {
  const TempDirectory dir;
  dir.write("catalog.yaml",
            "devices:\n"
            "  epyc-rank: {kind: cpu, memory_gb: 2, time_points: [[16, 1.0]], source: old}\n"
            "  slow-rank: {kind: cpu, memory_gb: 2, time_points: [[16, 1.0]], source: file}\n");
  const std::string with_catalog = "catalog: catalog.yaml\n" + kCpuScenario;
  const Scenario own = load_scenario(dir.write("s.yaml", with_catalog));
  CHECK(own.topology.hosts()[0].gpu_spec.memory_gb == 6);
  const Scenario from_file =
      load_scenario(dir.write("s.yaml", with_catalog), {"topology.nodes.0.gpu=slow-rank"});
  CHECK(from_file.topology.hosts()[0].gpu_spec.memory_gb == 2);
}

TEST_CASE("--set reaches a declared device and workload") {
  const Scenario scenario = load(
      kCpuScenario, {"devices.epyc-rank.memory_gb=12", "workloads.small-cnn.parameters=200000"});
  CHECK(scenario.topology.hosts()[0].gpu_spec.memory_gb == 12);
  CHECK(scenario.workload.cost.parameters == 200000);
}

TEST_CASE("a bad device, workload or machine names the file, line and key") {
  const TempDirectory dir;
  const auto error = [&](const std::string& text) {
    return error_of([&] { load_scenario(dir.write("cpu.yaml", text)); });
  };
  const std::string file = dir / "cpu.yaml";
  CHECK(error(replaced(kCpuScenario, "[[16, 0.010], [64, 0.034]", "[[64, 0.010], [16, 0.034]")) ==
        file + ":15: devices.epyc-rank.time_points.1.0: expected batches increasing, found '16'");
  CHECK(error(replaced(kCpuScenario, "    time_points: [[16, 0.010], [64, 0.034], [128, 0.066]]\n",
                       "")) ==
        file +
            ":12: devices.epyc-rank.peak_tflops: expected a value for required key "
            "'peak_tflops', found none");
  CHECK(error(replaced(kCpuScenario, "kind: cpu", "kind: tpu")) ==
        file + ":12: devices.epyc-rank.kind: expected gpu or cpu, found 'tpu'");
  CHECK(error(replaced(kCpuScenario, "  workload: small-cnn", "  workload: small-rnn"))
            .starts_with(file + ":39: training.workload: expected one of vgg11-cifar10"));
  CHECK(error(replaced(kCpuScenario, "devices:\n",
                       "    - {name: other, gpu: epyc-rank, cpu_cores: 4, machine: vm, link: "
                       "{to: loopback, bandwidth_gbps: 20}}\ndevices:\n"))
            .find("cpu_cores of machine 'vm' given before (2)") != std::string::npos);
}

TEST_CASE("mixed precision halves activation memory: ResNet-50 batch 256 fits a 16 GB V100") {
  const std::string scenario =
      "topology:\n"
      "  nodes: [{name: v, gpu: V100, cpu_cores: 8}]\n"
      "training:\n"
      "  workload: resnet50-cifar10\n";
  const Scenario fp32 = load(scenario);
  const Scenario mixed = load(scenario, {"training.precision=mixed"});
  const NodeSpec& gpu = fp32.topology.hosts()[0];
  CHECK(mixed.cost.activation_bytes_per_sample == fp32.cost.activation_bytes_per_sample / 2);
  CHECK(max_batch(gpu, mixed.cost) > max_batch(gpu, fp32.cost) * 19 / 10);
}

}  // namespace
}  // namespace dynamix
