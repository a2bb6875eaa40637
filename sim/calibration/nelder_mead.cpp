// Nelder-Mead simplex search.
#include "sim/calibration/nelder_mead.h"

#include <algorithm>
#include <numeric>

#include "sim/core/check.h"

namespace dynamix {
namespace {

struct Vertex {
  std::vector<double> x;
  double value = 0;
};

std::vector<double> along(const std::vector<double>& from, const std::vector<double>& to,
                          double t) {
  std::vector<double> point(from.size());
  for (std::size_t i = 0; i < from.size(); ++i) point[i] = from[i] + t * (to[i] - from[i]);
  return point;
}

std::vector<double> centroid(const std::vector<Vertex>& simplex) {
  std::vector<double> center(simplex.front().x.size(), 0.0);
  for (std::size_t v = 0; v + 1 < simplex.size(); ++v) {
    for (std::size_t i = 0; i < center.size(); ++i) center[i] += simplex[v].x[i];
  }
  for (double& c : center) c /= static_cast<double>(simplex.size() - 1);
  return center;
}

}  // namespace

NelderMeadResult nelder_mead(const std::function<double(std::span<const double>)>& f,
                             std::vector<double> x0, const NelderMeadOptions& options) {
  DYNAMIX_CHECK(!x0.empty(), "nothing to minimize");
  int evaluations = 0;
  const auto evaluate = [&](std::vector<double> x) {
    ++evaluations;
    const double value = f(x);
    return Vertex{std::move(x), value};
  };
  std::vector<Vertex> simplex{evaluate(x0)};
  for (std::size_t i = 0; i < x0.size(); ++i) {
    std::vector<double> x = x0;
    x[i] += options.step;
    simplex.push_back(evaluate(std::move(x)));
  }
  const auto by_value = [](const Vertex& a, const Vertex& b) { return a.value < b.value; };
  while (true) {
    std::stable_sort(simplex.begin(), simplex.end(), by_value);
    if (evaluations >= options.max_evaluations ||
        simplex.back().value - simplex.front().value < options.tolerance) {
      break;
    }
    const std::vector<double> center = centroid(simplex);
    Vertex& worst = simplex.back();
    Vertex reflected = evaluate(along(worst.x, center, 2.0));
    if (reflected.value < simplex.front().value) {
      Vertex expanded = evaluate(along(worst.x, center, 3.0));
      worst = expanded.value < reflected.value ? std::move(expanded) : std::move(reflected);
    } else if (reflected.value < simplex[simplex.size() - 2].value) {
      worst = std::move(reflected);
    } else {
      const bool outside = reflected.value < worst.value;
      Vertex contracted = evaluate(along(worst.x, center, outside ? 1.5 : 0.5));
      if (contracted.value < std::min(reflected.value, worst.value)) {
        worst = std::move(contracted);
      } else {
        for (std::size_t v = 1; v < simplex.size(); ++v)
          simplex[v] = evaluate(along(simplex.front().x, simplex[v].x, 0.5));
      }
    }
  }
  return {simplex.front().x, simplex.front().value, evaluations};
}

}  // namespace dynamix
