// GpuCatalog: reading and validating the GPU catalog.
#include "sim/cluster/gpu_catalog.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <iomanip>

#include "sim/io/config_node.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {
namespace {

double required_at_least(const ConfigNode& entry, std::string_view key, double minimum) {
  entry.at(key);
  return entry.at_least_or(key, minimum, minimum);
}

/// The compute model's parameters: t(b) = fixed_overhead + b·F / (peak·u(b)).
void read_model_parameters(const ConfigNode& entry, GpuSpec& gpu) {
  gpu.peak_tflops = entry.positive("peak_tflops");
  gpu.max_efficiency = entry.positive("max_efficiency");
  if (gpu.max_efficiency > 1) entry.at("max_efficiency").fail("a fraction in (0, 1]");
  gpu.half_efficiency_batch = required_at_least(entry, "half_efficiency_batch", 0);
  gpu.fixed_overhead =
      Duration{std::llround(required_at_least(entry, "fixed_overhead_ms", 0) * 1e6)};
}

GpuSpec read_gpu(const ConfigNode& entry) {
  entry.reject_unknown({"name", "peak_tflops", "memory_gb", "max_efficiency",
                        "half_efficiency_batch", "fixed_overhead_ms", "sources"});
  GpuSpec gpu;
  gpu.name = entry.text("name");
  gpu.memory_gb = entry.positive("memory_gb");
  read_model_parameters(entry, gpu);
  const ConfigNode sources = entry.at("sources");
  const std::initializer_list<std::string_view> number_keys = {
      "peak_tflops", "memory_gb", "max_efficiency", "half_efficiency_batch", "fixed_overhead_ms"};
  sources.reject_unknown(number_keys);
  for (std::string_view key : number_keys) {
    const ConfigNode citation = sources.at(key);
    gpu.sources.emplace(std::string(key), citation.as_text());
  }
  return gpu;
}

std::vector<std::pair<double, double>> read_time_points(const ConfigNode& list) {
  std::vector<std::pair<double, double>> points;
  for (const ConfigNode& point : list.items()) {
    const std::vector<ConfigNode> pair = point.items();
    if (pair.size() != 2) point.fail("[batch, seconds]");
    const double batch = pair[0].as_number();
    const double seconds = pair[1].as_number();
    if (!(batch >= 1)) pair[0].fail("a batch >= 1");
    if (!points.empty() && !(batch > points.back().first)) pair[0].fail("batches increasing");
    if (!(seconds > 0) || !std::isfinite(seconds)) pair[1].fail("seconds > 0");
    points.emplace_back(batch, seconds);
  }
  if (points.empty()) list.fail("at least one [batch, seconds] point");
  return points;
}

GpuSpec read_device(const std::string& name, const ConfigNode& entry) {
  entry.reject_unknown({"kind", "memory_gb", "time_points", "peak_tflops", "max_efficiency",
                        "half_efficiency_batch", "fixed_overhead_ms", "reserved_gb",
                        "colocation_slowdown", "oversubscription_skew", "source"});
  GpuSpec device;
  device.name = name;
  const std::string kind = entry.text_or("kind", "gpu");
  if (kind != "gpu" && kind != "cpu") entry.at("kind").fail("gpu or cpu");
  device.kind = kind == "cpu" ? DeviceKind::kCpu : DeviceKind::kGpu;
  device.memory_gb = entry.positive("memory_gb");
  device.reserved_gb = entry.at_least_or("reserved_gb", 0, 1.0);
  if (device.reserved_gb >= device.memory_gb) entry.at("reserved_gb").fail("less than memory_gb");
  device.colocation_slowdown = entry.at_least_or("colocation_slowdown", 0, 0);
  device.oversubscription_skew = entry.at_least_or("oversubscription_skew", 0, 0);
  if (device.oversubscription_skew >= 1) entry.at("oversubscription_skew").fail("below 1");
  if (const auto points = entry.find("time_points")) {
    device.time_points = read_time_points(*points);
  } else {
    read_model_parameters(entry, device);
  }
  device.sources.emplace("all", entry.text("source"));
  return device;
}

}  // namespace

std::vector<GpuSpec> GpuCatalog::read_devices(const ConfigNode& devices) {
  std::vector<GpuSpec> result;
  for (const std::string& name : devices.keys())
    result.push_back(read_device(name, devices.at(name)));
  return result;
}

void GpuCatalog::check_devices(const ConfigNode& devices, Diagnostics& diagnostics) {
  for (const std::string& name : devices.keys()) {
    const ConfigNode entry = devices.at(name);
    const bool gpu = entry.text_or("kind", "gpu") != "cpu";
    // B200: 2.25 PFLOPS dense BF16, 4.5 PFLOPS FP8 (NVIDIA Blackwell datasheet).
    diagnostics.check_typical(
        entry, "peak_tflops", "TFLOPS",
        {.high = 5000, .above = "above any accelerator we know", .slips = {1e3, 1e6, 1e9, 1e12}});
    // B300: 288 GB of HBM3e; a CPU device's memory is its host's, a few TB at most.
    diagnostics.check_typical(
        entry, "memory_gb", "GB",
        {.high = gpu ? 288.0 : 8192.0,
         .above = gpu ? "above any GPU's memory we know" : "above any host's memory we know",
         .slips = {1e3, 1e6, 1e9}});
  }
}

GpuCatalog GpuCatalog::with(const std::vector<GpuSpec>& devices) const {
  GpuCatalog catalog = *this;
  for (const GpuSpec& device : devices) {
    auto same = std::find_if(catalog.gpus_.begin(), catalog.gpus_.end(),
                             [&](const GpuSpec& known) { return known.name == device.name; });
    if (same == catalog.gpus_.end()) {
      catalog.gpus_.push_back(device);
    } else {
      *same = device;
    }
  }
  return catalog;
}

GpuCatalog GpuCatalog::load(const std::string& path) {
  return load(ConfigNode::parse(read_text(path), path));
}

GpuCatalog GpuCatalog::load(const ConfigNode& root) {
  root.reject_unknown({"gpus"});
  GpuCatalog catalog;
  for (const ConfigNode& entry : root.at("gpus").items()) {
    GpuSpec gpu = read_gpu(entry);
    if (catalog.find(gpu.name) != nullptr) {
      entry.at("name").fail("a GPU name not already in the catalog");
    }
    catalog.gpus_.push_back(std::move(gpu));
  }
  if (catalog.gpus_.empty()) root.at("gpus").fail("at least one GPU");
  return catalog;
}

GpuCatalog GpuCatalog::builtin() {
  // Parsed once: every scenario load asks for it, a calibration fit at every evaluation.
  static const GpuCatalog catalog = load(std::string(kBuiltinPath));
  return catalog;
}

const GpuSpec* GpuCatalog::find(std::string_view name) const {
  for (const GpuSpec& gpu : gpus_) {
    if (gpu.name == name) return &gpu;
  }
  return nullptr;
}

std::vector<std::string> GpuCatalog::names() const {
  std::vector<std::string> result;
  result.reserve(gpus_.size());
  for (const GpuSpec& gpu : gpus_) result.push_back(gpu.name);
  return result;
}

void print_gpu_table(const GpuCatalog& catalog, std::ostream& out) {
  const auto flags = out.flags();
  out << std::left << std::setw(12) << "name" << std::setw(6) << "kind" << std::right
      << std::setw(11) << "memory_gb" << std::setw(13) << "peak_tflops" << std::setw(16)
      << "max_efficiency" << std::setw(22) << "half_efficiency_batch" << std::setw(19)
      << "fixed_overhead_ms" << '\n';
  for (const GpuSpec& gpu : catalog.gpus()) {
    out << std::left << std::setw(12) << gpu.name << std::setw(6)
        << (gpu.kind == DeviceKind::kCpu ? "cpu" : "gpu") << std::right << std::fixed
        << std::setprecision(1) << std::setw(11) << gpu.memory_gb << std::setw(13)
        << gpu.peak_tflops << std::setprecision(3) << std::setw(16) << gpu.max_efficiency
        << std::setprecision(1) << std::setw(22) << gpu.half_efficiency_batch
        << std::setprecision(3) << std::setw(19) << to_seconds(gpu.fixed_overhead) * 1e3 << '\n';
  }
  out.flags(flags);
}

}  // namespace dynamix
