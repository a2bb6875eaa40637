// GpuCatalog: reading and validating the GPU catalog.
#include "sim/cluster/gpu_catalog.h"

#include <cmath>
#include <initializer_list>

#include "sim/io/config_node.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {
namespace {

double required_at_least(const ConfigNode& entry, std::string_view key, double minimum) {
  entry.at(key);
  return entry.at_least_or(key, minimum, minimum);
}

GpuSpec read_gpu(const ConfigNode& entry) {
  entry.reject_unknown({"name", "peak_tflops", "memory_gb", "max_efficiency",
                        "half_efficiency_batch", "fixed_overhead_ms", "sources"});
  GpuSpec gpu;
  gpu.name = entry.text("name");
  gpu.peak_tflops = entry.positive("peak_tflops");
  gpu.memory_gb = entry.positive("memory_gb");
  gpu.max_efficiency = entry.positive("max_efficiency");
  if (gpu.max_efficiency > 1) entry.at("max_efficiency").fail("a fraction in (0, 1]");
  gpu.half_efficiency_batch = required_at_least(entry, "half_efficiency_batch", 0);
  gpu.fixed_overhead =
      Duration{std::llround(required_at_least(entry, "fixed_overhead_ms", 0) * 1e6)};
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

}  // namespace

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

GpuCatalog GpuCatalog::builtin() { return load(std::string(kBuiltinPath)); }

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

}  // namespace dynamix
