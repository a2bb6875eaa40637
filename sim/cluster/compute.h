// How long a host takes to compute and load a batch, and how much GPU memory the batch needs.
#pragma once

#include <utility>
#include <vector>

#include "sim/cluster/topology.h"
#include "sim/core/time.h"

namespace dynamix {

/// What the compute, memory and CPU models need to know about a workload.
struct ModelCost {
  /// Trainable parameters (count).
  double parameters = 0;
  /// Forward + backward FLOPs per sample, counting a multiply-add as one FLOP, as model tables
  /// (torchvision, ptflops) do: ResNet-50 at 224² is 4.1e9 forward, ~3× that for training.
  double flops_per_sample = 0;
  /// Activation memory kept for the backward pass, per sample.
  double activation_bytes_per_sample = 0;
  /// Data loading and augmentation time of one sample on one CPU core.
  double cpu_seconds_per_sample = 0;
  /// Bytes per weight and per gradient (4: fp32 master weights and gradients).
  double bytes_per_parameter = 4;
  /// Optimizer state per parameter: 4 for SGD momentum, 8 for Adam.
  double optimizer_state_bytes_per_parameter = 4;
};

/// Fraction of the memory left after the device's reserve lost to allocator fragmentation
/// (assumed).
inline constexpr double kGpuFragmentation = 0.05;

/// The batch each GPU of `node` computes when the node trains on `batch` samples: the largest
/// share of an even split.
int batch_per_gpu(const NodeSpec& node, int batch);
/// Forward + backward time of `batch` samples: t(b) = t_fixed + b·F / (P·u(b)) with
/// u(b) = u_max·b / (b + b_half) and b the per-GPU batch (small batches under-use the GPU), or
/// the device's measured time points interpolated at b. A CPU device shared by more ranks than
/// its machine has cores is slower by that ratio (NodeSpec::core_sharing). Zero for an empty
/// batch. The node must have GPUs.
/// (Devices of kind cpu count as the node's "GPUs" here: one per rank.)
double compute_seconds(const NodeSpec& node, const ModelCost& cost, int batch);
/// compute_seconds rounded up to whole nanoseconds.
Duration compute_time(const NodeSpec& node, const ModelCost& cost, int batch);
/// The largest batch whose weights, gradients, optimizer state and activations fit in every GPU
/// of `node` after the reserve; 0 when even the model alone does not fit.
int max_batch(const NodeSpec& node, const ModelCost& cost);
/// Bytes one GPU of `node` holds while training on `batch` samples, reserve included.
double memory_bytes(const NodeSpec& node, const ModelCost& cost, int batch);
/// memory_bytes as a fraction of one GPU's memory (above 1 when the batch does not fit).
double memory_utilization(const NodeSpec& node, const ModelCost& cost, int batch);
/// Piecewise-linear interpolation of (batch, seconds) points at `batch`, extrapolated linearly
/// through the two nearest points beyond either end (never below the first point's time scaled
/// to the batch, nor below the last point's time).
double interpolate_time(const std::vector<std::pair<double, double>>& points, double batch);
/// Wall time for the node's CPU cores to load and augment `batch` samples, all cores busy.
double load_seconds(const NodeSpec& node, const ModelCost& cost, int batch);
/// CPU time ratio of an iteration: the cores' busy time over the iteration time.
double cpu_time_ratio(const NodeSpec& node, const ModelCost& cost, int batch,
                      double iteration_seconds);

}  // namespace dynamix
