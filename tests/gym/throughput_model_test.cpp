// The throughput model the rules fit: per-worker compute time against batch, with a memory.
#include "gym/throughput_model.h"

#include <doctest/doctest.h>

#include <vector>

namespace dynamix {
namespace {

/// Two workers at 0.1 s per 100 samples for `steady` windows, then worker 0 at three times that
/// for `slowed` windows.
ThroughputModel fitted(double memory, int steady, int slowed) {
  ThroughputModel model(memory);
  WindowMetrics window;
  window.workers.resize(2);
  for (int i = 0; i < steady + slowed; ++i) {
    for (WorkerWindow& worker : window.workers) {
      worker.batch_size = 100;
      worker.compute_s = 0.1;
    }
    if (i >= steady) window.workers[0].compute_s = 0.3;
    model.observe(window);
  }
  return model;
}

TEST_CASE(
    "A fit with memory 0.5 (goodput+straggler's) follows a worker that slows down; the full-memory "
    "fit lags") {
  const ThroughputModel recent = fitted(0.5, 30, 2);
  const ThroughputModel everything = fitted(1, 30, 2);
  // 1000 samples/s before, 333 after: two windows bring the recent fit within 30% of it.
  CHECK(recent.speed(0) < 1.3 * 1000.0 / 3);
  CHECK(everything.speed(0) > 0.8 * 1000.0);
  CHECK(recent.speed(1) == doctest::Approx(1000));
  const std::vector<int> split = recent.proportional_split(400, 32, {1024, 1024});
  CHECK(split[0] < split[1] / 2);
}

}  // namespace
}  // namespace dynamix
