// Observations for the batch-size agent: a per-worker block plus a global block, with a
// declared schema (names, units, normalization, bounds) exported alongside policies.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gym/window_metrics.h"

namespace dynamix {

/// One feature: raw metric → normalized value clipped to [low, high].
struct FeatureSpec {
  std::string name;
  std::string unit;
  /// How the raw value is normalized, e.g. "x/1024", "log2(x)-5", "x".
  std::string normalization;
  float low = 0;
  float high = 1;
};

struct ObservationSchema {
  /// Schema version; bump when features change (exported policies check it).
  int version = 3;
  std::vector<FeatureSpec> local;
  std::vector<FeatureSpec> global;
  std::size_t features_per_worker() const { return local.size() + global.size(); }
  std::string to_json() const;
};

/// A [workers × features] row-major matrix; row i is worker i's local block followed by the
/// global block (the same in every row), the input of π(a_i | s_i, s_global).
struct Observation {
  std::size_t workers = 0;
  std::size_t features = 0;
  std::vector<float> values;
  const float* row(std::size_t worker) const { return values.data() + worker * features; }
};

/// The one place where raw window metrics become features, for simulated and real workers.
class ObservationBuilder {
 public:
  ObservationBuilder();
  const ObservationSchema& schema() const { return schema_; }
  /// Fills `out` (reusing its storage); every value finite and inside its declared bounds.
  void build(const WindowMetrics& window, Observation& out) const;

 private:
  ObservationSchema schema_;
};

}  // namespace dynamix
