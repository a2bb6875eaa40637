// Cost of loading a shipped scenario with --set overrides, as a calibration fit does at every
// evaluation and the environment at every sampled episode.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "sim/io/diagnostics.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_names.h"

namespace dynamix {
namespace {

void BM_LoadScenario(benchmark::State& state) {
  const std::string path = builtin_scenario_path("hetero32");
  const std::vector<std::string> overrides = {"batch_size=256"};
  Diagnostics quiet;
  for (auto _ : state) benchmark::DoNotOptimize(load_scenario(path, overrides, quiet));
  state.counters["loads_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LoadScenario);

}  // namespace
}  // namespace dynamix
