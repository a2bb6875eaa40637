// GPU types and the numbers the compute model needs from each, with their sources.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/core/time.h"

namespace dynamix {

class ConfigNode;
class Diagnostics;

/// What computes a worker's batch: a GPU, or the CPU cores of a rank (as gloo CPU training runs).
enum class DeviceKind { kGpu, kCpu };

/// One compute device type (historically, and in topology files, a "gpu"). A batch of b
/// samples of F FLOPs each takes t(b) = fixed_overhead + b·F / (peak·u(b)), u(b) =
/// max_efficiency·b / (b + half_efficiency_batch), or, when the device lists measured
/// time_points, their piecewise-linear interpolation.
struct GpuSpec {
  std::string name;
  DeviceKind kind = DeviceKind::kGpu;
  /// Measured (per-device batch, seconds of forward + backward) of the scenario's workload,
  /// batches increasing; replaces the formula when not empty.
  std::vector<std::pair<double, double>> time_points;
  /// Memory never available to the batch: CUDA context and library workspaces on a GPU
  /// (assumed 1 GB), the interpreter and libraries of a CPU rank.
  double reserved_gb = 1.0;
  /// κ: a CPU rank's compute slows by (1 + κ·(r − 1)) beside the r/c core sharing when r ranks
  /// share its machine (caches and memory bandwidth are shared too); 0 by default.
  double colocation_slowdown = 0;
  /// σ: when r ranks time-share c < r cores of its machine, they do not finish in step; the
  /// machine's ranks finish their compute spread evenly over ±σ·(1 − c/r) of it around the
  /// mean, so the others wait for the last at the all-reduce. 0 by default; below 1.
  double oversubscription_skew = 0;
  /// Dense FP16/BF16 tensor-core peak (mixed-precision training), in TFLOP/s.
  double peak_tflops = 0;
  double memory_gb = 0;
  /// Fraction of peak reached at large batch (u_max), calibrated against published throughput.
  double max_efficiency = 0;
  /// Batch per GPU at which half of max_efficiency is reached (b_half).
  double half_efficiency_batch = 0;
  /// Per-iteration cost that does not scale with the batch (launches, optimizer step).
  Duration fixed_overhead{};
  /// Field name → where its number comes from.
  std::map<std::string, std::string, std::less<>> sources;
};

/// The GPU types a topology may name.
class GpuCatalog {
 public:
  /// The catalog compiled into dynamix.
  static constexpr const char* kBuiltinPath = "embedded:/catalog/gpus.yaml";

  /// A YAML catalog file (or "embedded:/..."); unknown keys and numbers without a source are
  /// InputErrors.
  static GpuCatalog load(const std::string& path);
  static GpuCatalog load(const ConfigNode& root);
  static GpuCatalog builtin();
  /// Devices a scenario declares (`devices:`, NAME -> entry): `kind`, `memory_gb`, either
  /// `time_points` or the model's four parameters, optional `reserved_gb`, and one `source`
  /// line for its numbers.
  static std::vector<GpuSpec> read_devices(const ConfigNode& devices);
  /// Tells `diagnostics` of the devices' numbers a unit slip put far outside any accelerator:
  /// peak FLOP/s given in FLOP/s (121e12 for 121), memory in bytes.
  static void check_devices(const ConfigNode& devices, Diagnostics& diagnostics);

  /// This catalog with `devices` added, each replacing the entry of the same name.
  GpuCatalog with(const std::vector<GpuSpec>& devices) const;

  /// The GPU type with this exact name, or nullptr.
  const GpuSpec* find(std::string_view name) const;
  /// Names in file order.
  std::vector<std::string> names() const;
  const std::vector<GpuSpec>& gpus() const { return gpus_; }

 private:
  std::vector<GpuSpec> gpus_;
};

/// One row per device of `catalog`: name, kind, memory, peak, efficiency model, fixed overhead
/// (`dynamix gpus`).
void print_gpu_table(const GpuCatalog& catalog, std::ostream& out);

}  // namespace dynamix
