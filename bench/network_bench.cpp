// Flow-level network cost: max-min solves for ring groups and independent flows, ring iterations.
#include <benchmark/benchmark.h>

#include "sim/core/random.h"
#include "sim/core/simulator.h"
#include "sim/network/max_min.h"
#include "sim/network/network.h"

namespace dynamix {
namespace {

// Star topology: host i's uplink is link i, its downlink link hosts + i.
std::uint32_t uplink(std::uint32_t host) { return host; }
std::uint32_t downlink(std::uint32_t hosts, std::uint32_t host) { return hosts + host; }

void BM_MaxMinRingGroup(benchmark::State& state) {
  const auto members = static_cast<std::uint32_t>(state.range(0));
  MaxMinProblem problem;
  problem.capacities.assign(2 * members, 25e9 / 8);
  problem.add_variable(1e11);
  for (std::uint32_t i = 0; i < members; ++i) {
    problem.add_usage(uplink(i));
    problem.add_usage(downlink(members, (i + 1) % members));
  }
  MaxMinSolver solver;
  for (auto _ : state) benchmark::DoNotOptimize(solver.solve(problem).data());
  const auto solves = static_cast<double>(state.iterations());
  state.counters["solves_per_s"] = benchmark::Counter(solves, benchmark::Counter::kIsRate);
  state.counters["members_per_s"] =
      benchmark::Counter(solves * members, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MaxMinRingGroup)->Arg(32)->Arg(1024)->Arg(4096)->ArgName("members");

void BM_MaxMinIndependentFlows(benchmark::State& state) {
  const auto flows = static_cast<std::uint32_t>(state.range(0));
  Rng rng(1, stream_id("network_bench"));
  MaxMinProblem problem;
  problem.capacities.assign(2 * flows, 25e9 / 8);
  for (std::uint32_t i = 0; i < flows; ++i) {
    auto to = static_cast<std::uint32_t>(rng.below(flows - 1));
    if (to >= i) ++to;
    problem.add_variable(rng.uniform(1e9, 4e9));
    problem.add_usage(uplink(i));
    problem.add_usage(downlink(flows, to));
  }
  MaxMinSolver solver;
  for (auto _ : state) benchmark::DoNotOptimize(solver.solve(problem).data());
  const auto solves = static_cast<double>(state.iterations());
  state.counters["solves_per_s"] = benchmark::Counter(solves, benchmark::Counter::kIsRate);
  state.counters["flows_per_s"] = benchmark::Counter(solves * flows, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MaxMinIndependentFlows)->Arg(1024)->ArgName("flows");

// One ring all-reduce's transfer through the Network: start, solve, complete, callback.
void BM_NetworkRingTransfer(benchmark::State& state) {
  const auto members = static_cast<std::uint32_t>(state.range(0));
  Simulator sim;
  Network network(
      sim, std::vector<LinkSpec>(2 * members, LinkSpec{25, std::chrono::microseconds(2), 0}));
  std::vector<Route> ring;
  for (std::uint32_t i = 0; i < members; ++i) {
    ring.push_back({uplink(i), downlink(members, (i + 1) % members)});
  }
  std::int64_t done = 0;
  for (auto _ : state) {
    network.start_transfer(ring, 25e6, [&](const TransferStats&) { ++done; });
    sim.run();
  }
  state.counters["transfers_per_s"] =
      benchmark::Counter(static_cast<double>(done), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_NetworkRingTransfer)->Arg(32)->Arg(1024)->ArgName("members");

}  // namespace
}  // namespace dynamix
