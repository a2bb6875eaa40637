// Progressive filling over a compressed variable/resource incidence, rebuilt per solve.
#include "sim/network/max_min.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "sim/core/check.h"

namespace dynamix {
namespace {

constexpr std::uint32_t kNoResource = std::numeric_limits<std::uint32_t>::max();
// Resources whose fill level is within this relative distance of the lowest saturate together,
// so that rounding never splits one bottleneck into two filling rounds.
constexpr double kLevelTolerance = 1e-12;

// Min-heap order on fill levels; ties by resource, so the fill order never depends on the heap.
struct Later {
  template <typename Entry>
  bool operator()(const Entry& a, const Entry& b) const {
    if (a.level != b.level) return a.level > b.level;
    return a.local > b.local;
  }
};

}  // namespace

std::size_t MaxMinProblem::add_variable(double bound) {
  bounds.push_back(bound);
  first_usage.push_back(usages.size());
  return bounds.size() - 1;
}

void MaxMinProblem::add_usage(std::uint32_t resource, double coefficient) {
  DYNAMIX_CHECK(!bounds.empty(), "add_usage before any add_variable");
  usages.push_back({resource, coefficient});
  first_usage.back() = usages.size();
}

void MaxMinProblem::clear_variables() {
  bounds.clear();
  usages.clear();
  first_usage.assign(1, 0);
}

void MaxMinSolver::gather_weights(const MaxMinProblem& problem) {
  for (const std::uint32_t resource : resources_) {
    if (resource < local_of_.size()) local_of_[resource] = kNoResource;
  }
  local_of_.resize(problem.capacities.size(), kNoResource);
  resources_.clear();
  remaining_.clear();
  weight_.clear();
  unfixed_users_.clear();
  for (const MaxMinUsage& usage : problem.usages) {
    DYNAMIX_CHECK(usage.resource < problem.capacities.size(),
                  "usage of resource " << usage.resource << " among " << problem.capacities.size());
    DYNAMIX_CHECK(usage.coefficient > 0, "usage coefficient " << usage.coefficient);
    std::uint32_t local = local_of_[usage.resource];
    if (local == kNoResource) {
      local = static_cast<std::uint32_t>(resources_.size());
      local_of_[usage.resource] = local;
      resources_.push_back(usage.resource);
      remaining_.push_back(problem.capacities[usage.resource]);
      weight_.push_back(0);
      unfixed_users_.push_back(0);
    }
    weight_[local] += usage.coefficient;
    ++unfixed_users_[local];
  }
}

void MaxMinSolver::collect_resources(const MaxMinProblem& problem) {
  gather_weights(problem);
  const std::size_t count = resources_.size();
  first_user_.assign(count + 1, 0);
  for (const MaxMinUsage& usage : problem.usages) ++first_user_[local_of_[usage.resource] + 1];
  for (std::size_t local = 0; local < count; ++local) first_user_[local + 1] += first_user_[local];
  users_.resize(problem.usages.size());
  for (std::size_t variable = 0; variable < problem.variable_count(); ++variable) {
    for (std::size_t u = problem.first_usage[variable]; u < problem.first_usage[variable + 1];
         ++u) {
      users_[first_user_[local_of_[problem.usages[u].resource]]++] =
          static_cast<std::uint32_t>(variable);
    }
  }
  for (std::size_t local = count; local > 0; --local) first_user_[local] = first_user_[local - 1];
  first_user_[0] = 0;
}

void MaxMinSolver::fix(const MaxMinProblem& problem, std::size_t variable, double rate) {
  rates_[variable] = rate;
  fixed_[variable] = 1;
  for (std::size_t u = problem.first_usage[variable]; u < problem.first_usage[variable + 1]; ++u) {
    const MaxMinUsage& usage = problem.usages[u];
    const std::uint32_t local = local_of_[usage.resource];
    if (std::isfinite(rate)) remaining_[local] -= usage.coefficient * rate;
    weight_[local] -= usage.coefficient;
    --unfixed_users_[local];
    if (unfixed_users_[local] > 0) {
      heap_.push_back({level(local), local});
      std::push_heap(heap_.begin(), heap_.end(), Later{});
    }
  }
}

double MaxMinSolver::level(std::uint32_t local) const {
  return std::max(0.0, remaining_[local]) / weight_[local];
}

bool MaxMinSolver::current(const LevelEntry& entry) const {
  return unfixed_users_[entry.local] > 0 && entry.level == level(entry.local);
}

void MaxMinSolver::pop_level() {
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  heap_.pop_back();
}

std::size_t MaxMinSolver::queue_bounds(const MaxMinProblem& problem) {
  const std::size_t count = problem.variable_count();
  std::size_t unfixed = count;
  by_bound_.clear();
  for (std::size_t variable = 0; variable < count; ++variable) {
    const double bound = problem.bounds[variable];
    DYNAMIX_CHECK(bound >= 0, "variable " << variable << " has bound " << bound);
    if (problem.first_usage[variable] == problem.first_usage[variable + 1]) {
      fix(problem, variable, bound);
      --unfixed;
    } else if (bound < kUnbounded) {
      by_bound_.push_back({bound, static_cast<std::uint32_t>(variable)});
    }
  }
  // Bounds are consumed smallest first, and usually few bind: a heap beats sorting them all.
  std::make_heap(by_bound_.begin(), by_bound_.end(), std::greater<>{});
  return unfixed;
}

std::size_t MaxMinSolver::fix_bounds_up_to(const MaxMinProblem& problem, double lowest) {
  std::size_t fixed = 0;
  while (!by_bound_.empty() && by_bound_.front().first <= lowest) {
    const auto [bound, variable] = by_bound_.front();
    std::pop_heap(by_bound_.begin(), by_bound_.end(), std::greater<>{});
    by_bound_.pop_back();
    if (fixed_[variable]) continue;
    fix(problem, variable, bound);
    ++fixed;
  }
  return fixed;
}

std::size_t MaxMinSolver::saturate(const MaxMinProblem& problem, double lowest,
                                   std::size_t unfixed) {
  const double saturated = lowest * (1 + kLevelTolerance);
  std::size_t fixed = 0;
  while (fixed < unfixed && !heap_.empty() && heap_.front().level <= saturated) {
    const LevelEntry entry = heap_.front();
    pop_level();
    if (!current(entry)) continue;
    for (std::size_t i = first_user_[entry.local]; i < first_user_[entry.local + 1]; ++i) {
      const std::uint32_t variable = users_[i];
      if (fixed_[variable]) continue;
      fix(problem, variable, lowest);
      ++fixed;
    }
  }
  return fixed;
}

double MaxMinSolver::solve_single(const MaxMinProblem& problem) {
  // The general path's weights and levels, so that the rate is its rate to the bit.
  gather_weights(problem);
  const double bound = problem.bounds[0];
  DYNAMIX_CHECK(bound >= 0, "variable 0 has bound " << bound);
  double lowest = kUnbounded;
  for (std::uint32_t local = 0; local < resources_.size(); ++local) {
    lowest = std::min(lowest, level(local));
  }
  if (bound <= lowest) return bound;
  return std::isfinite(lowest) ? lowest : kUnbounded;
}

const std::vector<double>& MaxMinSolver::solve(const MaxMinProblem& problem) {
  const std::size_t count = problem.variable_count();
  DYNAMIX_CHECK(
      problem.first_usage.size() == count + 1,
      "first_usage has " << problem.first_usage.size() << " entries for " << count << " variables");
  rates_.assign(count, 0.0);
  fixed_.assign(count, 0);
  if (count == 1) {
    rates_[0] = solve_single(problem);
    return rates_;
  }
  collect_resources(problem);
  std::size_t unfixed = queue_bounds(problem);
  heap_.clear();
  for (std::uint32_t local = 0; local < resources_.size(); ++local) {
    heap_.push_back({level(local), local});
  }
  std::make_heap(heap_.begin(), heap_.end(), Later{});

  while (unfixed > 0) {
    while (!heap_.empty() && !current(heap_.front())) pop_level();
    const double lowest = heap_.empty() ? kUnbounded : heap_.front().level;
    if (!by_bound_.empty() && by_bound_.front().first <= lowest) {
      // Variables capped below the level free capacity for the others, which only raises the
      // levels of the resources they share: every bound up to `lowest` is final.
      unfixed -= fix_bounds_up_to(problem, lowest);
    } else if (!std::isfinite(lowest)) {
      for (std::size_t variable = 0; variable < count; ++variable) {
        if (!fixed_[variable]) fix(problem, variable, kUnbounded);
      }
      break;
    } else {
      unfixed -= saturate(problem, lowest, unfixed);
    }
  }
  return rates_;
}

std::vector<double> solve_max_min(const MaxMinProblem& problem) {
  MaxMinSolver solver;
  return solver.solve(problem);
}

}  // namespace dynamix
