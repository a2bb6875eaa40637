// Running per-feature mean and variance of observations.
#include "policies/ppo/running_mean_std.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "sim/core/check.h"

namespace dynamix {

namespace {
// Gymnasium's RunningMeanStd starts from a tiny count so the first batch dominates.
constexpr double kInitialCount = 1e-4;
constexpr double kVarianceEpsilon = 1e-8;
}  // namespace

RunningMeanStd::RunningMeanStd(std::size_t features)
    : count_(kInitialCount), mean_(features, 0.0), variance_(features, 1.0) {}

void RunningMeanStd::update(std::span<const float> values, std::size_t rows) {
  const std::size_t features = mean_.size();
  DYNAMIX_CHECK(values.size() == rows * features,
                values.size() << " values for " << rows << " rows of " << features);
  if (rows == 0) return;
  for (std::size_t f = 0; f < features; ++f) {
    double batch_mean = 0;
    for (std::size_t r = 0; r < rows; ++r) batch_mean += values[r * features + f];
    batch_mean /= static_cast<double>(rows);
    double batch_variance = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      const double d = values[r * features + f] - batch_mean;
      batch_variance += d * d;
    }
    batch_variance /= static_cast<double>(rows);
    const double batch_count = static_cast<double>(rows);
    const double total = count_ + batch_count;
    const double delta = batch_mean - mean_[f];
    mean_[f] += delta * batch_count / total;
    const double m2 = variance_[f] * count_ + batch_variance * batch_count +
                      delta * delta * count_ * batch_count / total;
    variance_[f] = m2 / total;
  }
  count_ += static_cast<double>(rows);
}

std::vector<float> RunningMeanStd::float_mean() const {
  return std::vector<float>(mean_.begin(), mean_.end());
}

std::vector<float> RunningMeanStd::float_std() const {
  std::vector<float> out(variance_.size());
  for (std::size_t f = 0; f < out.size(); ++f) {
    out[f] = static_cast<float>(std::sqrt(variance_[f] + kVarianceEpsilon));
  }
  return out;
}

void RunningMeanStd::normalize(std::span<const float> values, std::span<float> out,
                               float clip) const {
  const std::size_t features = mean_.size();
  DYNAMIX_CHECK(out.size() == values.size() && features > 0 && values.size() % features == 0,
                "normalizing " << values.size() << " values of " << features << " features");
  const std::vector<float> mean = float_mean();
  const std::vector<float> stddev = float_std();
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::size_t f = i % features;
    out[i] = std::clamp((values[i] - mean[f]) / stddev[f], -clip, clip);
  }
}

std::string RunningMeanStd::serialize() const {
  std::ostringstream out;
  out << std::hexfloat << mean_.size() << ' ' << count_;
  for (std::size_t f = 0; f < mean_.size(); ++f) out << ' ' << mean_[f] << ' ' << variance_[f];
  return out.str();
}

bool RunningMeanStd::deserialize(const std::string& text) {
  std::istringstream in(text);
  std::size_t features = 0;
  std::string word;
  if (!(in >> features) || features != mean_.size()) return false;
  auto read = [&](double& value, double low) {
    if (!(in >> word)) return false;
    char* end = nullptr;
    value = std::strtod(word.c_str(), &end);
    return *end == '\0' && std::isfinite(value) && value >= low;
  };
  const double lowest = -std::numeric_limits<double>::max();
  RunningMeanStd loaded(features);
  if (!read(loaded.count_, 0)) return false;
  for (std::size_t f = 0; f < features; ++f) {
    if (!read(loaded.mean_[f], lowest) || !read(loaded.variance_[f], 0)) return false;
  }
  if (in >> word) return false;
  *this = std::move(loaded);
  return true;
}

}  // namespace dynamix
