// Compute, memory and CPU models: batch efficiency, GPU speed order, memory limits, cores.
#include "sim/cluster/compute.h"

#include <doctest/doctest.h>

#include <string>

#include "sim/cluster/gpu_catalog.h"

namespace dynamix {
namespace {

const GpuCatalog& catalog() {
  static const GpuCatalog gpus = GpuCatalog::builtin();
  return gpus;
}

NodeSpec node(const char* gpu, int gpus = 1, int cores = 8) {
  return worker_node(std::string(gpu) + "-node", *catalog().find(gpu), gpus, cores);
}

ModelCost resnet50() {
  ModelCost cost;
  cost.parameters = 25.6e6;
  cost.flops_per_sample = 3 * 4.1e9;
  cost.activation_bytes_per_sample = 50e6;
  cost.cpu_seconds_per_sample = 4e-3;
  return cost;
}

TEST_CASE("Per-sample compute time falls as the batch grows: small batches under-use the GPU") {
  const NodeSpec v100 = node("V100");
  double previous_total = 0;
  double previous_per_sample = 1e9;
  for (int batch = 1; batch <= 1024; batch *= 2) {
    CAPTURE(batch);
    const double total = compute_seconds(v100, resnet50(), batch);
    CHECK(total > previous_total);
    CHECK(total / batch < previous_per_sample);
    previous_total = total;
    previous_per_sample = total / batch;
  }
  const double large = 1024 / compute_seconds(v100, resnet50(), 1024);
  const double small = 8 / compute_seconds(v100, resnet50(), 8);
  CHECK(small < 0.5 * large);
  CHECK(compute_seconds(v100, resnet50(), 0) == 0);
  CHECK(compute_time(v100, resnet50(), 64) >= from_seconds(compute_seconds(v100, resnet50(), 64)));
}

TEST_CASE("A slower GPU takes longer for the same batch") {
  const ModelCost cost = resnet50();
  const double t4 = compute_seconds(node("T4"), cost, 64);
  const double v100 = compute_seconds(node("V100"), cost, 64);
  const double a100 = compute_seconds(node("A100"), cost, 64);
  const double h100 = compute_seconds(node("H100"), cost, 64);
  CHECK(t4 > v100);
  CHECK(v100 > a100);
  CHECK(a100 > h100);
  ModelCost bigger = cost;
  bigger.flops_per_sample *= 2;
  CHECK(compute_seconds(node("A100"), bigger, 64) > a100);
}

TEST_CASE("A host with several GPUs splits its batch over them") {
  const ModelCost cost = resnet50();
  CHECK(batch_per_gpu(node("V100", 4), 256) == 64);
  CHECK(batch_per_gpu(node("V100", 4), 257) == 65);
  CHECK(compute_seconds(node("V100", 4), cost, 256) ==
        doctest::Approx(compute_seconds(node("V100"), cost, 64)));
  CHECK(max_batch(node("V100", 4), cost) == 4 * max_batch(node("V100"), cost));
}

TEST_CASE("The largest batch fits in GPU memory and one more sample does not") {
  const ModelCost cost = resnet50();
  for (const char* gpu : {"T4", "V100", "V100-32GB", "A100", "A100-80GB", "H100", "RTX3090"}) {
    CAPTURE(gpu);
    const NodeSpec host = node(gpu);
    const int largest = max_batch(host, cost);
    CHECK(largest > 0);
    CHECK(memory_utilization(host, cost, largest) <= 1.0);
    CHECK(memory_utilization(host, cost, largest + 1) > 1.0);
    CHECK(memory_bytes(host, cost, largest) <= host.gpu_spec.memory_gb * 1e9);
  }
  CHECK(max_batch(node("V100-32GB"), cost) > max_batch(node("V100"), cost));
  // A V100 16GB holds the batch of 256 NVIDIA trains ResNet-50 with under mixed precision.
  CHECK(max_batch(node("V100"), cost) >= 256);
}

TEST_CASE("A bigger model leaves room for a smaller batch, and a huge one for none") {
  const NodeSpec v100 = node("V100");
  ModelCost cost = resnet50();
  const int small_model = max_batch(v100, cost);
  cost.parameters = 340e6;
  const int large_model = max_batch(v100, cost);
  CHECK(large_model < small_model);
  cost.optimizer_state_bytes_per_parameter = 8;
  CHECK(max_batch(v100, cost) < large_model);
  cost.parameters = 2e9;
  CHECK(max_batch(v100, cost) == 0);
  CHECK(memory_utilization(v100, resnet50(), 64) < memory_utilization(v100, resnet50(), 128));
}

TEST_CASE("Loading time and CPU time ratio scale inversely with CPU cores") {
  const ModelCost cost = resnet50();
  const double four = load_seconds(node("V100", 1, 4), cost, 128);
  const double sixteen = load_seconds(node("V100", 1, 16), cost, 128);
  CHECK(four == doctest::Approx(128 * 4e-3 / 4));
  CHECK(sixteen == doctest::Approx(four / 4));
  CHECK(load_seconds(node("V100", 1, 4), cost, 256) == doctest::Approx(2 * four));
  CHECK(cpu_time_ratio(node("V100", 1, 4), cost, 128, 0.256) == doctest::Approx(0.5));
  CHECK(cpu_time_ratio(node("V100", 1, 16), cost, 128, 0.256) == doctest::Approx(0.125));
}

}  // namespace
}  // namespace dynamix
