// WindowMetrics: folding simulated iterations into windows.
#include "gym/window_metrics.h"

#include <doctest/doctest.h>

#include <cmath>

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

/// A window of `iterations` iterations in which every worker runs `batch` and measures B_noise
/// `noise` (σ²_norm·b = noise).
WindowMetrics noise_window(double noise, double batch, int workers = 2, int iterations = 20) {
  WindowMetrics window;
  window.iterations = iterations;
  for (int w = 0; w < workers; ++w) {
    window.workers.push_back({.batch_size = batch, .grad_var_norm = noise / batch});
  }
  return window;
}

TEST_CASE("SmoothedNoiseScale starts at the first measurement and keeps 0.999 a step") {
  SmoothedNoiseScale smoothed;
  CHECK(smoothed.update(noise_window(0, 64)) == 0);
  CHECK(smoothed.update(noise_window(1000, 64)) == doctest::Approx(1000));
  CHECK(smoothed.update(noise_window(1000, 64)) == doctest::Approx(1000));
  // Bias-corrected weights: after two windows of 20 steps at the first batch, the third (also
  // 20 steps) weighs (1 - 0.999^20) against 0.999^20 (1 - 0.999^40) for the first two.
  const double keep = std::pow(0.999, 20);
  const double old_weight = 1 - keep * keep;
  const double expected = (keep * old_weight * 1000 + (1 - keep) * 4000) / (1 - keep * keep * keep);
  CHECK(smoothed.update(noise_window(4000, 64)) == doctest::Approx(expected));
  // This early the bias-corrected average is close to the plain mean of the three windows.
  CHECK(expected == doctest::Approx(2000).epsilon(0.01));
  // A window without a measurement leaves the average; reset forgets it.
  CHECK(smoothed.update(noise_window(0, 64)) == doctest::Approx(expected));
  smoothed.reset();
  CHECK(smoothed.update(noise_window(4000, 64)) == doctest::Approx(4000));
}

TEST_CASE("SmoothedNoiseScale forgets faster as the global batch grows, as AdaptDL's scale does") {
  SmoothedNoiseScale small_batches, large_batches;
  for (SmoothedNoiseScale* smoothed : {&small_batches, &large_batches}) {
    smoothed->update(noise_window(1000, 64));
  }
  const double at_first_batch = small_batches.update(noise_window(5000, 64));
  const double at_eight_times = large_batches.update(noise_window(5000, 512));
  const double keep = std::pow(0.999, 20 * 8);
  CHECK(at_eight_times ==
        doctest::Approx((keep * (1 - std::pow(0.999, 20)) * 1000 + (1 - keep) * 5000) /
                        (1 - keep * std::pow(0.999, 20))));
  CHECK(at_eight_times > at_first_batch);
}

}  // namespace
}  // namespace dynamix
