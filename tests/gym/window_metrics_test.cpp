// WindowMetrics: folding simulated iterations into windows.
#include "gym/window_metrics.h"

#include <doctest/doctest.h>

#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

TEST_CASE("WindowAccumulator averages a window's iterations per worker") {
  const Scenario scenario = load_scenario(kDefaultScenario);
  TrainingRun run(scenario, 3);
  WindowAccumulator accumulator(run, scenario.network.mss_bytes);
  const std::vector<int> batches(run.workers(), 64);
  std::vector<IterationRecord> records;
  for (int i = 0; i < 4; ++i) {
    records.push_back(run.step(batches));
    accumulator.add(records.back());
  }
  CHECK(accumulator.iterations() == 4);
  const WindowMetrics window = accumulator.finish(0.25, 0.5, 0.1);
  CHECK(accumulator.iterations() == 0);
  CHECK(window.iterations == 4);
  CHECK(window.time_s == doctest::Approx(to_seconds(records.back().end)));
  double train_accuracy = 0, compute_s = 0, bytes = 0, comm_s = 0, retransmits = 0;
  for (const IterationRecord& record : records) {
    train_accuracy += record.training.train_accuracy / 4;
    compute_s += record.workers[1].compute_s / 4;
    bytes += record.workers[1].bytes_sent;
    comm_s += record.workers[1].comm_s;
    retransmits += record.workers[1].retransmits;
  }
  CHECK(window.iteration_s == doctest::Approx(to_seconds(records.back().end) / 4));
  CHECK(window.train_accuracy == doctest::Approx(train_accuracy));
  CHECK(window.train_accuracy_change == doctest::Approx(train_accuracy - 0.25));
  CHECK(window.validation_accuracy == 0.5);
  CHECK(window.progress == 0.1);
  REQUIRE(window.workers.size() == run.workers());
  const WorkerWindow& worker = window.workers[1];
  CHECK(worker.gpu_type == run.node(1).gpu);
  CHECK(worker.batch_size == 64);
  CHECK(worker.compute_s == doctest::Approx(compute_s));
  CHECK(worker.samples_per_s == doctest::Approx(64 / compute_s));
  CHECK(worker.throughput_gbps == doctest::Approx(bytes * 8e-9 / comm_s));
  CHECK(worker.retransmit_rate == doctest::Approx(retransmits / (bytes / 1460)));
}

}  // namespace
}  // namespace dynamix
