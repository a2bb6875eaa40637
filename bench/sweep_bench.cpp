// Sweep throughput: episodes per second of the sweep engine at 1 and 2 jobs (threads), records
// synced to disk included; the target is 2 jobs >= 1.8x one job on a 2-core machine.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <string>

#include "policies/baselines/baselines.h"
#include "sim/io/diagnostics.h"
#include "studies/cell_records.h"
#include "studies/interrupt.h"
#include "studies/progress.h"
#include "studies/sweep_engine.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;

/// 2 cells × 2 policies × 8 seeds of the 32-node hetero32 scenario with its budgets raised to
/// 1200 s and 1000 epochs: episodes of 30-200 ms, long enough that the sync of each record to
/// disk (a few ms) does not dominate, and enough of them that the last one ends soon after the
/// others.
SweepPlan bench_plan() {
  SweepSpec spec;
  spec.scenario = "embedded:/scenarios/hetero32.yaml";
  spec.overrides = {"training.budget_time_s=1200", "training.budget_epochs=1000"};
  spec.seeds = 8;
  Diagnostics diagnostics;
  return make_sweep_plan(
      spec, {"sync.architecture=ring,ps"}, "static:128,goodput+proportional",
      [](const std::string& name, std::uint64_t seed, const EnvOptions&,
         const std::string& option) { return make_baseline(name, seed, option); },
      {}, diagnostics);
}

void BM_SweepThroughput(benchmark::State& state) {
  const SweepPlan plan = bench_plan();
  std::vector<std::size_t> all(plan.episodes());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  std::string pattern = (fs::temp_directory_path() / "dynamix-sweep-bench-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) state.SkipWithError("no temporary directory");
  const InterruptScope interrupt;
  Progress progress(std::cerr, {.style = ProgressStyle::kQuiet});
  int round = 0;
  for (auto _ : state) {
    const CellRecords records(fs::path(pattern) / std::to_string(round++));
    EpisodeQueue queue(all, write_to(records));
    run_sweep_episodes(plan, queue, all.size(), static_cast<int>(state.range(0)), interrupt,
                       progress);
  }
  fs::remove_all(pattern);
  state.counters["episodes_per_s"] = benchmark::Counter(
      static_cast<double>(plan.episodes() * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SweepThroughput)
    ->Arg(1)
    ->Arg(2)
    ->ArgName("jobs")
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace dynamix

BENCHMARK_MAIN();
