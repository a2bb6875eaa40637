// Derivative-free minimization (Nelder & Mead 1965), deterministic: the same function and start
// give the same evaluations in the same order.
#pragma once

#include <functional>
#include <span>
#include <vector>

namespace dynamix {

struct NelderMeadOptions {
  /// Initial simplex: x0 and x0 + step along each axis.
  double step = 0.5;
  int max_evaluations = 400;
  /// Stop when the simplex's values differ by less than this.
  double tolerance = 1e-7;
};

struct NelderMeadResult {
  std::vector<double> x;
  double value = 0;
  int evaluations = 0;
};

/// Minimizes f from x0 with the standard coefficients (reflection 1, expansion 2, contraction
/// 1/2, shrink 1/2).
NelderMeadResult nelder_mead(const std::function<double(std::span<const double>)>& f,
                             std::vector<double> x0, const NelderMeadOptions& options = {});

}  // namespace dynamix
