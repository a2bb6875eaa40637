// Relative errors and Kendall's tau-b (Kendall 1945; O(n^2), n is a few dozen configurations).
#include "sim/calibration/agreement.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/core/check.h"

namespace dynamix {

double relative_error(double simulated, double measured) {
  DYNAMIX_CHECK(measured > 0, "a measured time must be positive");
  return (simulated - measured) / measured;
}

double median_absolute(std::span<const double> errors) {
  if (errors.empty()) return 0;
  std::vector<double> magnitudes;
  for (double e : errors) magnitudes.push_back(std::abs(e));
  std::sort(magnitudes.begin(), magnitudes.end());
  const std::size_t n = magnitudes.size();
  return n % 2 == 1 ? magnitudes[n / 2] : (magnitudes[n / 2 - 1] + magnitudes[n / 2]) / 2;
}

double kendall_tau(std::span<const double> a, std::span<const double> b) {
  DYNAMIX_CHECK(a.size() == b.size(), "Kendall's tau needs paired sequences");
  const auto sign = [](double x) { return (x > 0) - (x < 0); };
  double concordant = 0;
  double untied_a = 0;
  double untied_b = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t j = i + 1; j < a.size(); ++j) {
      const int sa = sign(a[i] - a[j]);
      const int sb = sign(b[i] - b[j]);
      concordant += sa * sb;
      untied_a += sa != 0;
      untied_b += sb != 0;
    }
  }
  if (untied_a == 0 || untied_b == 0) return 1;
  return concordant / std::sqrt(untied_a * untied_b);
}

}  // namespace dynamix
