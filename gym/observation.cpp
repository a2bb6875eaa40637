// The observation features: one table of names, units, normalizations and bounds, used both to
// declare the schema and to compute the values.
#include "gym/observation.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/io/json_writer.h"

namespace dynamix {
namespace {

/// What several features need from the whole window.
struct Aggregates {
  double mean_samples_per_s = 0;
  double mean_grad_std = 0;
  double mean_grad_var = 0;
  double workers = 0;
  double global_batch = 0;
  /// B_noise measured over the window (measured_noise_scale); 0 when unmeasured.
  double noise_scale = 0;
};

struct LocalFeature {
  const char* name;
  const char* unit;
  const char* normalization;
  float low;
  float high;
  double (*value)(const WorkerWindow&, const WindowMetrics&, const Aggregates&);
};

struct GlobalFeature {
  const char* name;
  const char* unit;
  const char* normalization;
  float low;
  float high;
  double (*value)(const WindowMetrics&, const Aggregates&);
};

double share(double part_s, double iteration_s) {
  return iteration_s > 0 ? part_s / iteration_s : 0;
}

// Rates span decades (1e-6 to 1 for retransmissions, 0.1 to 400 Gb/s), hence log scales.
constexpr LocalFeature kLocal[] = {
    {"throughput", "Gb/s", "log10(1+x)/3", 0, 1,
     [](const WorkerWindow& w, const WindowMetrics&, const Aggregates&) {
       return std::log10(1 + w.throughput_gbps) / 3;
     }},
    {"retransmit_rate", "segments/segment", "1+log10(x+1e-6)/6", 0, 1,
     [](const WorkerWindow& w, const WindowMetrics&, const Aggregates&) {
       return 1 + std::log10(w.retransmit_rate + 1e-6) / 6;
     }},
    {"cpu_time_ratio", "1", "x", 0, 1,
     [](const WorkerWindow& w, const WindowMetrics&, const Aggregates&) {
       return w.cpu_time_ratio;
     }},
    {"memory_util", "1", "x", 0, 1,
     [](const WorkerWindow& w, const WindowMetrics&, const Aggregates&) { return w.memory_util; }},
    {"compute_share", "1", "compute_s/iteration_s", 0, 1,
     [](const WorkerWindow& w, const WindowMetrics& m, const Aggregates&) {
       return share(w.compute_s, m.iteration_s);
     }},
    {"comm_share", "1", "comm_s/iteration_s", 0, 1,
     [](const WorkerWindow& w, const WindowMetrics& m, const Aggregates&) {
       return share(w.comm_s, m.iteration_s);
     }},
    {"wait_share", "1", "wait_s/iteration_s", 0, 1,
     [](const WorkerWindow& w, const WindowMetrics& m, const Aggregates&) {
       return share(w.wait_s, m.iteration_s);
     }},
    {"batch_size", "samples", "(log2(x)-5)/5", -1, 1,
     [](const WorkerWindow& w, const WindowMetrics&, const Aggregates&) {
       return (std::log2(std::max(w.batch_size, 1.0)) - 5) / 5;
     }},
    {"relative_speed", "1", "samples_per_s/mean(samples_per_s)", 0, 4,
     [](const WorkerWindow& w, const WindowMetrics&, const Aggregates& a) {
       return a.mean_samples_per_s > 0 ? w.samples_per_s / a.mean_samples_per_s : 1.0;
     }},
};

constexpr GlobalFeature kGlobal[] = {
    {"train_accuracy", "1", "x", 0, 1,
     [](const WindowMetrics& m, const Aggregates&) { return m.train_accuracy; }},
    {"train_accuracy_change", "1", "10*x", -1, 1,
     [](const WindowMetrics& m, const Aggregates&) { return 10 * m.train_accuracy_change; }},
    {"validation_accuracy", "1", "x", 0, 1,
     [](const WindowMetrics& m, const Aggregates&) { return m.validation_accuracy; }},
    {"train_loss", "nats", "log(1+x)/3", 0, 2,
     [](const WindowMetrics& m, const Aggregates&) {
       return std::log1p(std::max(m.train_loss, 0.0)) / 3;
     }},
    {"grad_std_norm", "1", "log(1+mean(x))", 0, 5,
     [](const WindowMetrics&, const Aggregates& a) {
       return std::log1p(std::max(a.mean_grad_std, 0.0));
     }},
    {"grad_var_norm", "1", "log(1+mean(x))", 0, 10,
     [](const WindowMetrics&, const Aggregates& a) {
       return std::log1p(std::max(a.mean_grad_var, 0.0));
     }},
    {"progress", "1", "x", 0, 1,
     [](const WindowMetrics& m, const Aggregates&) { return m.progress; }},
    // What precedes a budget miss: a budget running out while the target is still far (a batch
    // grown past the noise scale spends epochs on little progress).
    {"epoch_budget_used", "1", "x", 0, 1,
     [](const WindowMetrics& m, const Aggregates&) { return m.epoch_budget_used; }},
    {"time_budget_used", "1", "x", 0, 1,
     [](const WindowMetrics& m, const Aggregates&) { return m.time_budget_used; }},
    {"target_progress", "1", "validation_accuracy/target_accuracy", 0, 1,
     [](const WindowMetrics& m, const Aggregates&) { return m.target_progress; }},
    {"iteration_time", "s", "(log10(x)+3)/5", 0, 1,
     [](const WindowMetrics& m, const Aggregates&) {
       return (std::log10(std::max(m.iteration_s, 1e-9)) + 3) / 5;
     }},
    {"workers", "workers", "log2(x)/10", 0, 1,
     [](const WindowMetrics&, const Aggregates& a) {
       return std::log2(std::max(a.workers, 1.0)) / 10;
     }},
    // What the scale changes: the global batch, and the same relative to the gradient noise
    // scale, which sets its statistical efficiency (Pollux) and large-batch harm.
    {"global_batch", "samples", "(log2(x)-5)/10", 0, 1.5,
     [](const WindowMetrics&, const Aggregates& a) {
       return (std::log2(std::max(a.global_batch, 1.0)) - 5) / 10;
     }},
    {"noise_ratio", "1", "log2(global_batch/noise_scale)/4", -2, 2,
     [](const WindowMetrics&, const Aggregates& a) {
       return a.noise_scale > 0 && a.global_batch > 0
                  ? std::log2(a.global_batch / a.noise_scale) / 4
                  : 0.0;
     }},
};

// NaN counts as the low bound so that a missing metric from a real worker stays inside bounds.
float clip(double value, float low, float high) {
  if (std::isnan(value)) return low;
  return static_cast<float>(std::clamp(value, static_cast<double>(low), static_cast<double>(high)));
}

template <typename Feature>
FeatureSpec spec_of(const Feature& feature) {
  return {feature.name, feature.unit, feature.normalization, feature.low, feature.high};
}

void write_features(JsonWriter& json, const std::vector<FeatureSpec>& features) {
  json.begin_array();
  for (const FeatureSpec& feature : features) {
    json.begin_object();
    json.key("name");
    json.value(feature.name);
    json.key("unit");
    json.value(feature.unit);
    json.key("normalization");
    json.value(feature.normalization);
    json.key("low");
    json.value(static_cast<double>(feature.low));
    json.key("high");
    json.value(static_cast<double>(feature.high));
    json.end_object();
  }
  json.end_array();
}

}  // namespace

std::string ObservationSchema::to_json() const {
  std::ostringstream out;
  JsonWriter json(out);
  json.begin_object();
  json.key("version");
  json.value(version);
  json.key("layout");
  json.value("workers x (local + global), row i = worker i's local block then the global block");
  json.key("features_per_worker");
  json.value(features_per_worker());
  json.key("local");
  write_features(json, local);
  json.key("global");
  write_features(json, global);
  json.end_object();
  out << '\n';
  return out.str();
}

ObservationBuilder::ObservationBuilder() {
  for (const LocalFeature& feature : kLocal) schema_.local.push_back(spec_of(feature));
  for (const GlobalFeature& feature : kGlobal) schema_.global.push_back(spec_of(feature));
}

void ObservationBuilder::build(const WindowMetrics& window, Observation& out) const {
  const std::size_t p = window.workers.size();
  Aggregates aggregates;
  aggregates.workers = static_cast<double>(p);
  for (const WorkerWindow& worker : window.workers) {
    aggregates.mean_samples_per_s += worker.samples_per_s;
    aggregates.mean_grad_std += worker.grad_std_norm;
    aggregates.mean_grad_var += worker.grad_var_norm;
    aggregates.global_batch += worker.batch_size;
  }
  aggregates.noise_scale = measured_noise_scale(window);
  if (p > 0) {
    aggregates.mean_samples_per_s /= static_cast<double>(p);
    aggregates.mean_grad_std /= static_cast<double>(p);
    aggregates.mean_grad_var /= static_cast<double>(p);
  }
  constexpr std::size_t kLocalCount = std::size(kLocal);
  constexpr std::size_t kGlobalCount = std::size(kGlobal);
  out.workers = p;
  out.features = kLocalCount + kGlobalCount;
  out.values.resize(p * out.features);
  float global[kGlobalCount];
  for (std::size_t f = 0; f < kGlobalCount; ++f) {
    global[f] = clip(kGlobal[f].value(window, aggregates), kGlobal[f].low, kGlobal[f].high);
  }
  for (std::size_t w = 0; w < p; ++w) {
    float* row = out.values.data() + w * out.features;
    for (std::size_t f = 0; f < kLocalCount; ++f) {
      row[f] = clip(kLocal[f].value(window.workers[w], window, aggregates), kLocal[f].low,
                    kLocal[f].high);
    }
    std::copy(global, global + kGlobalCount, row + kLocalCount);
  }
}

}  // namespace dynamix
