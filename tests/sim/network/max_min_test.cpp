// Max-min fair rates against hand-computed cases.
#include "sim/network/max_min.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "sim/core/random.h"

namespace dynamix {
namespace {

TEST_CASE("max-min gives the textbook rates when one flow crosses both links") {
  // Bertsekas & Gallager, Data Networks, §6.5: link 0 (capacity 1) carries flows 0 and 1, link 1
  // (capacity 2) carries flows 0 and 2. Link 0 saturates first at 1/2; flow 2 takes the rest.
  MaxMinProblem problem;
  problem.capacities = {1, 2};
  problem.add_variable();
  problem.add_usage(0);
  problem.add_usage(1);
  problem.add_variable();
  problem.add_usage(0);
  problem.add_variable();
  problem.add_usage(1);
  const auto rates = solve_max_min(problem);
  REQUIRE(rates.size() == 3);
  CHECK(rates[0] == doctest::Approx(0.5));
  CHECK(rates[1] == doctest::Approx(0.5));
  CHECK(rates[2] == doctest::Approx(1.5));
}

TEST_CASE("max-min counts a coupled group once per member crossing a link") {
  // A group of two members on link 0 (coefficient 2) against one plain flow: level 3 / (2 + 1).
  // On link 1 the group's third member alone would allow 10, so link 0 binds everyone.
  MaxMinProblem problem;
  problem.capacities = {3, 10};
  problem.add_variable();
  problem.add_usage(0, 2);
  problem.add_usage(1);
  problem.add_variable();
  problem.add_usage(0);
  const auto rates = solve_max_min(problem);
  CHECK(rates[0] == doctest::Approx(1.0));
  CHECK(rates[1] == doctest::Approx(1.0));
}

TEST_CASE("max-min adds up a resource listed twice by one variable") {
  MaxMinProblem twice;
  twice.capacities = {3};
  twice.add_variable();
  twice.add_usage(0);
  twice.add_usage(0);
  twice.add_variable();
  twice.add_usage(0);
  const auto rates = solve_max_min(twice);
  CHECK(rates[0] == doctest::Approx(1.0));
  CHECK(rates[1] == doctest::Approx(1.0));
}

TEST_CASE("max-min gives a bounded variable its bound and the others the rest") {
  MaxMinProblem problem;
  problem.capacities = {10, 4};
  problem.add_variable(2);
  problem.add_usage(0);
  problem.add_variable();
  problem.add_usage(0);
  problem.add_variable(100);
  problem.add_usage(0);
  problem.add_usage(1);
  const auto rates = solve_max_min(problem);
  CHECK(rates[0] == doctest::Approx(2.0));
  CHECK(rates[1] == doctest::Approx(4.0));
  CHECK(rates[2] == doctest::Approx(4.0));
}

TEST_CASE("max-min raises the other flows once a bounded one stops at its bound") {
  // Three flows on capacity 9: the bounded one stops at 1, the others split the remaining 8.
  MaxMinProblem problem;
  problem.capacities = {9};
  for (const double bound : {kUnbounded, 1.0, kUnbounded}) {
    problem.add_variable(bound);
    problem.add_usage(0);
  }
  const auto rates = solve_max_min(problem);
  CHECK(rates[0] == doctest::Approx(4.0));
  CHECK(rates[1] == doctest::Approx(1.0));
  CHECK(rates[2] == doctest::Approx(4.0));
}

TEST_CASE("max-min leaves a variable that uses nothing at its bound") {
  MaxMinProblem problem;
  problem.capacities = {1};
  problem.add_variable();
  problem.add_variable(7);
  const auto rates = solve_max_min(problem);
  CHECK(rates[0] == kUnbounded);
  CHECK(rates[1] == 7);
}

TEST_CASE("max-min never exceeds a capacity on a star of ring flows") {
  // Ring over a star: host i's uplink is 2i, its downlink 2i + 1; hosts 0..3 have capacity 1,
  // host 4's downlink is slower and paces the one coupled variable.
  const std::uint32_t hosts = 5;
  MaxMinProblem problem;
  problem.capacities.assign(std::size_t{2} * hosts, 1.0);
  problem.capacities[2 * 4 + 1] = 0.25;
  problem.add_variable();
  for (std::uint32_t i = 0; i < hosts; ++i) {
    problem.add_usage(2 * i);
    problem.add_usage(2 * ((i + 1) % hosts) + 1);
  }
  problem.add_variable();
  problem.add_usage(2 * 1 + 1);
  const auto rates = solve_max_min(problem);
  CHECK(rates[0] == doctest::Approx(0.25));
  CHECK(rates[1] == doctest::Approx(0.75));
}

TEST_CASE("MaxMinSolver gives the same rates when reused on a different problem") {
  MaxMinSolver solver;
  MaxMinProblem large;
  large.capacities.assign(8, 4.0);
  for (std::uint32_t i = 0; i < 8; ++i) {
    large.add_variable();
    large.add_usage(i);
    large.add_usage((i + 1) % 8);
  }
  const std::vector<double> first = solver.solve(large);
  CHECK(first[3] == doctest::Approx(2.0));
  MaxMinProblem small;
  small.capacities = {6};
  small.add_variable();
  small.add_usage(0);
  small.add_variable();
  small.add_usage(0);
  const auto& second = solver.solve(small);
  REQUIRE(second.size() == 2);
  CHECK(second[0] == doctest::Approx(3.0));
  CHECK(solver.solve(large) == first);
}

TEST_CASE("A lone variable gets the rate the general solver gives it, to the bit") {
  // The general path runs when a second variable, on a resource of its own, joins the problem.
  Rng rng(3, stream_id("max_min_single_test"));
  MaxMinSolver solver;
  for (int trial = 0; trial < 200; ++trial) {
    MaxMinProblem alone;
    const auto resources = 1 + rng.below(6);
    for (std::uint64_t r = 0; r < resources; ++r) alone.capacities.push_back(rng.uniform(0, 10));
    alone.add_variable(rng.bernoulli(0.3) ? rng.uniform(0.1, 5) : kUnbounded);
    const auto usages = rng.below(5);
    for (std::uint64_t u = 0; u < usages; ++u) {
      alone.add_usage(static_cast<std::uint32_t>(rng.below(resources)),
                      static_cast<double>(1 + rng.below(3)) / 3);
    }
    MaxMinProblem joined = alone;
    joined.capacities.push_back(1);
    joined.add_variable();
    joined.add_usage(static_cast<std::uint32_t>(resources));
    const double single = solver.solve(alone).at(0);
    CHECK(solver.solve(joined).at(0) == single);
  }
}

TEST_CASE("max-min rates are feasible and every variable has a bottleneck, on random problems") {
  // The bottleneck characterization (Bertsekas & Gallager §6.5.2): rates are max-min fair iff
  // each variable is at its bound or uses a saturated resource where no user has a higher rate.
  Rng rng(7, stream_id("max_min_test"));
  for (int trial = 0; trial < 200; ++trial) {
    MaxMinProblem problem;
    const auto resources = 1 + rng.below(12);
    for (std::uint64_t r = 0; r < resources; ++r) problem.capacities.push_back(rng.uniform(1, 10));
    const auto variables = 1 + rng.below(20);
    for (std::uint64_t v = 0; v < variables; ++v) {
      problem.add_variable(rng.bernoulli(0.3) ? rng.uniform(0.1, 5) : kUnbounded);
      const auto usages = 1 + rng.below(4);
      for (std::uint64_t u = 0; u < usages; ++u) {
        problem.add_usage(static_cast<std::uint32_t>(rng.below(resources)),
                          static_cast<double>(1 + rng.below(3)));
      }
    }
    const auto rates = solve_max_min(problem);
    std::vector<double> load(resources, 0.0);
    std::vector<double> highest(resources, 0.0);
    for (std::size_t v = 0; v < variables; ++v) {
      for (std::size_t u = problem.first_usage[v]; u < problem.first_usage[v + 1]; ++u) {
        load[problem.usages[u].resource] += problem.usages[u].coefficient * rates[v];
        highest[problem.usages[u].resource] =
            std::max(highest[problem.usages[u].resource], rates[v]);
      }
    }
    for (std::size_t r = 0; r < resources; ++r) {
      CHECK(load[r] <= problem.capacities[r] * (1 + 1e-9));
    }
    for (std::size_t v = 0; v < variables; ++v) {
      bool bottlenecked = rates[v] >= problem.bounds[v] * (1 - 1e-9);
      for (std::size_t u = problem.first_usage[v]; u < problem.first_usage[v + 1]; ++u) {
        const auto r = problem.usages[u].resource;
        if (load[r] >= problem.capacities[r] * (1 - 1e-9) && rates[v] >= highest[r] * (1 - 1e-9)) {
          bottlenecked = true;
        }
      }
      CHECK(bottlenecked);
    }
  }
}

}  // namespace
}  // namespace dynamix
