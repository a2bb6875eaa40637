// Event kernel throughput: events scheduled and fired per second.
#include <benchmark/benchmark.h>

#include "sim/core/random.h"
#include "sim/core/simulator.h"

namespace dynamix {
namespace {

// A steady population of pending events, each firing one successor at a random later time:
// the hold model (Jones 1986) that event-queue benchmarks use.
void BM_EventQueueHold(benchmark::State& state) {
  const auto pending = static_cast<int>(state.range(0));
  Simulator sim;
  Rng rng(1, 1);
  std::int64_t fired = 0;
  // Events capture one pointer, as the simulator's own callbacks do (no allocation per event).
  std::function<void()> hold;
  hold = [&] {
    ++fired;
    sim.schedule_after(Duration{static_cast<std::int64_t>(1 + rng.below(1000))},
                       [&hold] { hold(); });
  };
  for (int i = 0; i < pending; ++i) {
    sim.schedule_after(Duration{static_cast<std::int64_t>(rng.below(1000))}, [&hold] { hold(); });
  }
  for (auto _ : state) {
    for (int i = 0; i < 1000; ++i) sim.step();
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(fired), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventQueueHold)->Arg(64)->Arg(4096)->Arg(65536)->ArgName("pending");

}  // namespace
}  // namespace dynamix

BENCHMARK_MAIN();
