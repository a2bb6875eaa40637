// Running per-feature mean and variance of observations (parallel algorithm of Chan et al.).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace dynamix {

class RunningMeanStd {
 public:
  explicit RunningMeanStd(std::size_t features);

  /// Folds in `rows` rows of `features()` values each.
  void update(std::span<const float> values, std::size_t rows);
  /// Writes clamp((x − mean) / std, ±clip) for every value, std = sqrt(var + 1e-8).
  void normalize(std::span<const float> values, std::span<float> out, float clip) const;

  std::size_t features() const { return mean_.size(); }
  double count() const { return count_; }
  const std::vector<double>& mean() const { return mean_; }
  const std::vector<double>& variance() const { return variance_; }
  /// The float mean and std the normalization (and the exported module) uses.
  std::vector<float> float_mean() const;
  std::vector<float> float_std() const;

  /// Exact text form (hexadecimal floats) for checkpoints.
  std::string serialize() const;
  /// Reads serialize()'s text; false if it is malformed or for another feature count.
  bool deserialize(const std::string& text);

 private:
  double count_;
  std::vector<double> mean_;
  std::vector<double> variance_;
};

}  // namespace dynamix
