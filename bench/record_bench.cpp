// Cost of `dynamix simulate`'s recording per simulated iteration, beside the bare step: the
// target is that the default mode costs at most 2x the in-process step from 8 to 4096
// nodes. BM_SimulateIteration/mode:0 is the bare TrainingRun::step, 1 adds --record none
// (validation.csv only), 2 --record windows (N = 10), 3 --record iterations.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "bench/bench_scenarios.h"
#include "sim/scenario/training_run.h"
#include "studies/iteration_log.h"
#include "studies/run_directory.h"

namespace dynamix {
namespace {

constexpr int kWindowIterations = 10;

void BM_SimulateIteration(benchmark::State& state) {
  const auto mode = state.range(0);
  const auto nodes = static_cast<std::size_t>(state.range(1));
  const Scenario scenario = heterogeneous_ring(nodes, SyncArchitecture::kRing);
  TrainingRun run(scenario, 1);
  const std::vector<int> batches(nodes, 64);
  const std::filesystem::path out = std::filesystem::temp_directory_path() /
                                    ("dynamix-record-bench-" + std::to_string(::getpid()));
  std::optional<RunDirectory> directory;
  std::optional<IterationLog> log;
  if (mode > 0) {
    const RecordMode modes[] = {RecordMode::kNone, RecordMode::kWindows, RecordMode::kIterations};
    directory.emplace(out, "bench");
    log.emplace(*directory, modes[mode - 1], kWindowIterations);
  }
  std::int64_t iterations = 0;
  for (auto _ : state) {
    const IterationRecord& record = run.step(batches);
    if (log) log->add(run, record);
    benchmark::DoNotOptimize(record);
    ++iterations;
  }
  if (log) log->close();
  state.counters["iterations_per_s"] =
      benchmark::Counter(static_cast<double>(iterations), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulateIteration)
    ->ArgsProduct({{0, 1, 2, 3}, {8, 128, 4096}})
    ->ArgNames({"mode", "nodes"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace dynamix
