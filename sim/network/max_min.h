// Weighted max-min fair rates by progressive filling, as in SimGrid's LMM solver.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace dynamix {

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

/// `coefficient` units of a resource's capacity taken per unit of a variable's rate.
struct MaxMinUsage {
  std::uint32_t resource = 0;
  double coefficient = 1;
};

/// Variables (each a rate with an optional upper bound) sharing resources of fixed capacity.
/// A variable may list one resource several times: the coefficients add up.
struct MaxMinProblem {
  /// Capacity of each resource, indexed by resource id.
  std::vector<double> capacities;
  /// Upper bound of each variable's rate; kUnbounded for none.
  std::vector<double> bounds;
  /// Variable v uses usages[first_usage[v] .. first_usage[v + 1]).
  std::vector<std::size_t> first_usage{0};
  std::vector<MaxMinUsage> usages;

  std::size_t variable_count() const { return bounds.size(); }
  /// Appends a variable and returns its index; its usages follow through add_usage.
  std::size_t add_variable(double bound = kUnbounded);
  /// Adds a usage to the last variable added.
  void add_usage(std::uint32_t resource, double coefficient = 1);
  /// Removes every variable, keeping the capacities.
  void clear_variables();
};

/// Progressive filling: every unfixed variable grows at one level until a resource saturates
/// (fixing the variables that use it) or a variable reaches its bound. Resources wait in a heap
/// by fill level, so a solve costs O(U log U) for U usages; buffers are kept between calls.
class MaxMinSolver {
 public:
  /// The max-min fair rate of each variable (kUnbounded for one that uses nothing and has no
  /// bound). Valid until the next call.
  const std::vector<double>& solve(const MaxMinProblem& problem);

 private:
  /// A resource's fill level when it last changed; entries made stale by later changes are skipped.
  struct LevelEntry {
    double level;
    std::uint32_t local;
  };
  /// One variable (a lone collective, the common case): the lowest level among its resources,
  /// or its bound, without the heaps.
  double solve_single(const MaxMinProblem& problem);
  /// Each used resource's local index, capacity left and summed coefficients (weight).
  void gather_weights(const MaxMinProblem& problem);
  /// gather_weights, then each resource's users.
  void collect_resources(const MaxMinProblem& problem);
  void fix(const MaxMinProblem& problem, std::size_t variable, double rate);
  double level(std::uint32_t local) const;
  bool current(const LevelEntry& entry) const;
  void pop_level();
  /// Fixes the variables that use no resource at their bounds and queues the other bounds;
  /// the count left unfixed.
  std::size_t queue_bounds(const MaxMinProblem& problem);
  /// Fixes every queued bound up to `lowest` (they only raise the others' levels); how many.
  std::size_t fix_bounds_up_to(const MaxMinProblem& problem, double lowest);
  /// Fixes the users of every resource saturated at `lowest`; how many.
  std::size_t saturate(const MaxMinProblem& problem, double lowest, std::size_t unfixed);

  std::vector<double> rates_;
  std::vector<char> fixed_;
  std::vector<std::uint32_t> local_of_;
  std::vector<std::uint32_t> resources_;
  std::vector<double> remaining_;
  std::vector<double> weight_;
  std::vector<std::size_t> unfixed_users_;
  std::vector<std::size_t> first_user_;
  std::vector<std::uint32_t> users_;
  std::vector<LevelEntry> heap_;
  std::vector<std::pair<double, std::uint32_t>> by_bound_;
};

/// One-shot convenience for tests and tools.
std::vector<double> solve_max_min(const MaxMinProblem& problem);

}  // namespace dynamix
