// The compute, memory and CPU models of DESIGN.md "Compute, memory, CPU".
#include "sim/cluster/compute.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/core/check.h"

namespace dynamix {
namespace {

double static_bytes(const ModelCost& cost) {
  return cost.parameters *
         (2 * cost.bytes_per_parameter + cost.optimizer_state_bytes_per_parameter);
}

double usable_bytes(const NodeSpec& node) {
  return (node.gpu_spec.memory_gb - node.gpu_spec.reserved_gb) * 1e9 * (1 - kGpuFragmentation);
}

void check_gpus(const NodeSpec& node) {
  const GpuSpec& device = node.gpu_spec;
  DYNAMIX_CHECK(
      node.gpus > 0 &&
          (!device.time_points.empty() || (device.peak_tflops > 0 && device.max_efficiency > 0)),
      "host '" << node.name << "' has " << node.gpus << " GPUs of type '" << node.gpu << "'");
}

/// How much slower a CPU rank computes beside the other ranks of its machine: the core sharing,
/// the interference κ, and its place in the spread σ of oversubscribed ranks (GpuSpec).
double cpu_sharing(const NodeSpec& node) {
  const GpuSpec& device = node.gpu_spec;
  const int ranks = node.machine_ranks;
  const double place =
      ranks > 1 ? 2.0 * node.machine_slot / (ranks - 1) - 1.0 : 0.0;  // -1 … 1, mean 0
  return node.core_sharing * (1 + device.colocation_slowdown * (ranks - 1)) *
         (1 + device.oversubscription_skew * (1 - 1 / node.core_sharing) * place);
}

}  // namespace

int batch_per_gpu(const NodeSpec& node, int batch) {
  check_gpus(node);
  DYNAMIX_CHECK(batch >= 0, "batch " << batch);
  return (batch + node.gpus - 1) / node.gpus;
}

double compute_seconds(const NodeSpec& node, const ModelCost& cost, int batch) {
  const int per_gpu = batch_per_gpu(node, batch);
  if (per_gpu == 0) return 0;
  const GpuSpec& gpu = node.gpu_spec;
  const double sharing = gpu.kind == DeviceKind::kCpu ? cpu_sharing(node) : 1.0;
  if (!gpu.time_points.empty()) return interpolate_time(gpu.time_points, per_gpu) * sharing;
  // b·F / (P·u_max·b/(b+b_half)) = F·(b + b_half) / (P·u_max)
  const double flops = cost.flops_per_sample * (per_gpu + gpu.half_efficiency_batch);
  return (to_seconds(gpu.fixed_overhead) + flops / (gpu.peak_tflops * 1e12 * gpu.max_efficiency)) *
         sharing;
}

double interpolate_time(const std::vector<std::pair<double, double>>& points, double batch) {
  DYNAMIX_CHECK(!points.empty(), "no time points");
  const auto [b0, t0] = points.front();
  if (points.size() == 1) return t0 * batch / b0;
  // The segment that holds `batch`, or the first or last one beyond the ends.
  std::size_t right = 1;
  while (right + 1 < points.size() && points[right].first < batch) ++right;
  const auto [left_b, left_t] = points[right - 1];
  const auto [right_b, right_t] = points[right];
  const double linear = left_t + (right_t - left_t) * (batch - left_b) / (right_b - left_b);
  // Beyond the ends: never below the first point's per-sample time scaled down, nor below the
  // last point's time for a larger batch.
  if (batch < b0) return std::max(linear, t0 * batch / b0);
  if (batch > points.back().first) return std::max(linear, points.back().second);
  return linear;
}

Duration compute_time(const NodeSpec& node, const ModelCost& cost, int batch) {
  return ceil_seconds(compute_seconds(node, cost, batch));
}

int max_batch(const NodeSpec& node, const ModelCost& cost) {
  if (node.gpus <= 0) return 0;
  const double free_bytes = usable_bytes(node) - static_bytes(cost);
  if (free_bytes < 0) return 0;
  if (cost.activation_bytes_per_sample <= 0) return std::numeric_limits<int>::max();
  const double per_gpu = std::floor(free_bytes / cost.activation_bytes_per_sample);
  const double total = per_gpu * node.gpus;
  return total >= std::numeric_limits<int>::max() ? std::numeric_limits<int>::max()
                                                  : static_cast<int>(total);
}

double memory_bytes(const NodeSpec& node, const ModelCost& cost, int batch) {
  const double activations = batch_per_gpu(node, batch) * cost.activation_bytes_per_sample;
  return node.gpu_spec.reserved_gb * 1e9 +
         (static_bytes(cost) + activations) / (1 - kGpuFragmentation);
}

double memory_utilization(const NodeSpec& node, const ModelCost& cost, int batch) {
  return memory_bytes(node, cost, batch) / (node.gpu_spec.memory_gb * 1e9);
}

double load_seconds(const NodeSpec& node, const ModelCost& cost, int batch) {
  DYNAMIX_CHECK(node.cpu_cores > 0,
                "host '" << node.name << "' has " << node.cpu_cores << " cores");
  DYNAMIX_CHECK(batch >= 0, "batch " << batch);
  return batch * cost.cpu_seconds_per_sample / node.cpu_cores;
}

double cpu_time_ratio(const NodeSpec& node, const ModelCost& cost, int batch,
                      double iteration_seconds) {
  DYNAMIX_CHECK(iteration_seconds > 0, "iteration of " << iteration_seconds << " s");
  return load_seconds(node, cost, batch) / iteration_seconds;
}

}  // namespace dynamix
