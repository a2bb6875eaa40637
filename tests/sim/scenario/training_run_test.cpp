// TrainingRun: determinism across runs and threads, seeds, heterogeneity, batch size, target
// and budget.
#include "sim/scenario/training_run.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

const std::string kQuickstart =
    (std::filesystem::path(DYNAMIX_SOURCE_DIR) / "scenarios" / "quickstart.yaml").string();

Scenario quickstart(const std::vector<std::string>& overrides = {}) {
  return load_scenario(kQuickstart, overrides);
}

/// Every number an iteration produced, in a fixed order, for exact comparison.
std::vector<double> flatten(const IterationRecord& record) {
  const IterationStats& t = record.training;
  std::vector<double> values = {static_cast<double>(record.iteration),
                                static_cast<double>(record.start.time_since_epoch().count()),
                                static_cast<double>(record.end.time_since_epoch().count()),
                                t.train_loss,
                                t.train_accuracy,
                                t.progress,
                                t.epoch,
                                t.epoch_completed ? 1.0 : 0.0,
                                t.noise_scale,
                                t.efficiency,
                                t.gain,
                                t.lr_scale,
                                record.validation_accuracy.value_or(-1)};
  for (const WorkerIteration& w : record.workers) {
    values.insert(values.end(),
                  {static_cast<double>(w.batch_size), w.load_s, w.compute_s, w.wait_s, w.comm_s,
                   w.bytes_sent, w.retransmits, w.timeouts, w.throughput_gbps, w.cpu_time_ratio,
                   w.memory_util, w.grad_std_norm, w.grad_var_norm, w.straggling ? 1.0 : 0.0});
  }
  return values;
}

/// Runs `iterations` iterations (fewer if the budget ends first) with one batch on every worker.
std::vector<IterationRecord> run_records(const Scenario& scenario, std::uint64_t seed,
                                         int iterations, int batch) {
  TrainingRun run(scenario, seed);
  const std::vector<int> batches(run.workers(), batch);
  std::vector<IterationRecord> records;
  while (static_cast<int>(records.size()) < iterations && !run.budget_exhausted()) {
    records.push_back(run.step(batches));
  }
  return records;
}

std::vector<std::vector<double>> flatten(const std::vector<IterationRecord>& records) {
  std::vector<std::vector<double>> rows;
  rows.reserve(records.size());
  for (const IterationRecord& record : records) rows.push_back(flatten(record));
  return rows;
}

double iteration_seconds(const IterationRecord& record) {
  return to_seconds(record.end - record.start);
}

TEST_CASE("the same scenario and seed give identical iteration records") {
  const Scenario scenario = quickstart();
  const auto first = flatten(run_records(scenario, 42, 200, 128));
  const auto second = flatten(run_records(scenario, 42, 200, 128));
  REQUIRE(first.size() == 200);
  CHECK(first == second);
}

TEST_CASE("loss_slowdown divides a lossy run's time by the same cluster's without loss") {
  const Scenario lossy = load_scenario(
      (std::filesystem::path(DYNAMIX_SOURCE_DIR) / "scenarios" / "lossy8.yaml").string());
  const std::vector<int> batches(TrainingRun(lossy, lossy.seed).workers(), 64);
  ScenarioSpec spec = lossy.spec();
  spec.topology = spec.topology.without_loss();
  const Scenario lossless(std::move(spec));
  for (const LinkSpec& link : lossless.topology.links()) CHECK(link.loss_rate == 0);
  const auto seconds = [&batches](const Scenario& scenario) {
    double total = 0;
    for (const IterationRecord& record : run_records(scenario, scenario.seed, 5, batches[0])) {
      total += iteration_seconds(record);
    }
    return total;
  };
  CHECK(loss_slowdown(lossy, batches, 5) ==
        doctest::Approx(seconds(lossy) / seconds(lossless)).epsilon(1e-6));
  CHECK(loss_slowdown(lossy, batches, 5) > 1.5);
  CHECK(loss_slowdown(lossless, batches, 5) == 1);
  CHECK(loss_slowdown(quickstart(), batches, 5) == 1);
}

TEST_CASE("a training run outlives the scenario it was built from") {
  const auto alive = flatten(run_records(quickstart(), 42, 50, 128));
  std::optional<TrainingRun> run;
  run.emplace(quickstart(), 42);  // the scenario is a temporary, gone after this line
  std::vector<std::vector<double>> orphan;
  orphan.reserve(50);
  const std::vector<int> batches(run->workers(), 128);
  for (int i = 0; i < 50; ++i) orphan.push_back(flatten(run->step(batches)));
  CHECK(orphan == alive);
}

TEST_CASE("training runs on concurrent threads give the same records as one run alone") {
  const Scenario scenario = quickstart();
  const auto alone = flatten(run_records(scenario, 42, 200, 128));
  std::vector<std::vector<std::vector<double>>> results(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < results.size(); ++i) {
    threads.emplace_back(
        [&scenario, &results, i] { results[i] = flatten(run_records(scenario, 42, 200, 128)); });
  }
  for (std::thread& thread : threads) thread.join();
  for (std::size_t i = 0; i < results.size(); ++i) {
    CAPTURE(i);
    CHECK(results[i] == alone);
  }
}

TEST_CASE("a different seed changes the jittered compute timings") {
  const Scenario scenario = quickstart();
  const auto a = run_records(scenario, 1, 20, 128);
  const auto b = run_records(scenario, 2, 20, 128);
  REQUIRE(a.size() == b.size());
  std::size_t differing = 0;
  std::size_t rows = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    for (std::size_t w = 0; w < a[i].workers.size(); ++w, ++rows) {
      differing += a[i].workers[w].compute_s != b[i].workers[w].compute_s;
    }
  }
  CHECK(differing > rows / 2);
  // Within one run, a worker's compute time jitters from iteration to iteration.
  CHECK(a[0].workers[0].compute_s != a[1].workers[0].compute_s);
}

double mean_wait(const std::vector<IterationRecord>& records, std::size_t first_worker,
                 std::size_t last_worker) {
  double sum = 0;
  std::size_t count = 0;
  for (const IterationRecord& record : records) {
    for (std::size_t w = first_worker; w <= last_worker; ++w, ++count)
      sum += record.workers[w].wait_s;
  }
  return sum / static_cast<double>(count);
}

TEST_CASE("a slower GPU raises the other workers' barrier wait") {
  // Quick start: workers 0-3 are A100s (nodes.0), workers 4-7 V100s (nodes.1).
  const Scenario baseline = quickstart();
  const Scenario slower = quickstart({"topology.nodes.1.gpu=T4"});
  REQUIRE(slower.topology.hosts()[slower.worker_hosts[4]].gpu == "T4");
  const auto base_records = run_records(baseline, 3, 30, 128);
  const auto slow_records = run_records(slower, 3, 30, 128);
  const double base_wait = mean_wait(base_records, 0, 3);
  const double slow_wait = mean_wait(slow_records, 0, 3);
  CHECK(slow_wait > base_wait);
  CHECK(slow_wait > 1.5 * base_wait);
  // The A100s themselves compute as fast as before.
  CHECK(slow_records[0].workers[0].compute_s == base_records[0].workers[0].compute_s);
  // Every worker waits for the slowest, so the iteration lengthens.
  CHECK(iteration_seconds(slow_records[0]) > iteration_seconds(base_records[0]));
  for (const IterationRecord& record : slow_records) {
    for (const WorkerIteration& worker : record.workers) CHECK(worker.wait_s >= 0);
  }
}

double mean_comm(const std::vector<IterationRecord>& records) {
  double sum = 0;
  for (const IterationRecord& record : records) sum += record.workers[0].comm_s;
  return sum / static_cast<double>(records.size());
}

TEST_CASE("a co-located job's flow on a worker's link slows synchronization while it is on") {
  ScenarioSpec spec = quickstart().spec();
  const Route uplink = {*spec.topology.find_link("a100-0", "tor")};
  // Nearly always on, asking for more than its fair share of the 25 Gb/s link.
  spec.colocated_jobs = {{.from = "a100-0",
                          .to = "tor",
                          .route = uplink,
                          .rate_gbps = 20,
                          .mean_on_s = 1e4,
                          .mean_off_s = 1e-3}};
  const Scenario shared(spec);
  const auto alone = run_records(quickstart(), 3, 20, 128);
  const auto crowded = run_records(shared, 3, 20, 128);
  // Max-min sharing leaves the ring half of the link.
  CHECK(mean_comm(crowded) > 1.5 * mean_comm(alone));
  // Compute is the job's own: the co-located job only takes link capacity.
  CHECK(crowded[5].workers[0].compute_s == alone[5].workers[0].compute_s);
  CHECK(flatten(run_records(shared, 3, 20, 128)) == flatten(crowded));
}

TEST_CASE("bigger batches raise iteration time and memory utilization") {
  const Scenario scenario = quickstart();
  {
    TrainingRun run(scenario, 5);
    for (std::size_t w = 0; w < run.workers(); ++w) REQUIRE(run.max_batch(w) >= 256);
  }
  const auto small = run_records(scenario, 5, 10, 64);
  const auto large = run_records(scenario, 5, 10, 256);
  REQUIRE(small.size() == large.size());
  for (std::size_t i = 0; i < small.size(); ++i) {
    CAPTURE(i);
    CHECK(iteration_seconds(large[i]) > iteration_seconds(small[i]));
    for (std::size_t w = 0; w < small[i].workers.size(); ++w) {
      CAPTURE(w);
      CHECK(large[i].workers[w].memory_util > small[i].workers[w].memory_util);
      CHECK(large[i].workers[w].compute_s > small[i].workers[w].compute_s);
      CHECK(large[i].workers[w].memory_util < 1);
    }
  }
}

TEST_CASE("DDP buckets overlap the all-reduce with the backward pass") {
  const auto whole = run_records(quickstart(), 3, 5, 128);
  const auto bucketed = run_records(quickstart({"sync.bucket_mb=4"}), 3, 5, 128);
  REQUIRE(whole.size() == bucketed.size());
  for (std::size_t i = 0; i < whole.size(); ++i) {
    CAPTURE(i);
    double slowest_s = 0;
    for (std::size_t w = 0; w < whole[i].workers.size(); ++w) {
      const WorkerIteration& a = whole[i].workers[w];
      const WorkerIteration& b = bucketed[i].workers[w];
      CHECK(b.compute_s == a.compute_s);
      CHECK(b.wait_s == a.wait_s);
      CHECK(b.bytes_sent == doctest::Approx(a.bytes_sent));
      slowest_s = std::max(slowest_s, a.compute_s + a.wait_s);
    }
    // The last bucket still waits for the slowest backward pass, but less is left after it.
    CHECK(iteration_seconds(bucketed[i]) > slowest_s);
    CHECK(iteration_seconds(bucketed[i]) < iteration_seconds(whole[i]));
  }
}

TEST_CASE("DDP's work per bucket lengthens communication and the iteration") {
  const auto plain = run_records(quickstart(), 3, 3, 128);
  const auto costly = run_records(quickstart({"sync.bucket_overhead_us=500"}), 3, 3, 128);
  REQUIRE(plain.size() == costly.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    CAPTURE(i);
    CHECK(costly[i].workers[0].comm_s == doctest::Approx(plain[i].workers[0].comm_s + 500e-6));
    CHECK(iteration_seconds(costly[i]) ==
          doctest::Approx(iteration_seconds(plain[i]) + 500e-6).epsilon(1e-3));
  }
}

TEST_CASE(
    "the step overhead ends every iteration and is timed as communication, as a worker "
    "times it") {
  const auto plain = run_records(quickstart(), 3, 3, 128);
  const auto costly = run_records(quickstart({"training.step_overhead_us=2000"}), 3, 3, 128);
  REQUIRE(plain.size() == costly.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    CAPTURE(i);
    for (std::size_t w = 0; w < plain[i].workers.size(); ++w) {
      CHECK(costly[i].workers[w].compute_s == plain[i].workers[w].compute_s);
      CHECK(costly[i].workers[w].comm_s == doctest::Approx(plain[i].workers[w].comm_s + 2e-3));
    }
    // The same batch on every worker: the batch-independent cost adds to the iteration alone.
    CHECK(iteration_seconds(costly[i]) ==
          doctest::Approx(iteration_seconds(plain[i]) + 2e-3).epsilon(1e-3));
  }
}

TEST_CASE("buckets so small the gradient needs more than 4096 are refused") {
  CHECK_THROWS_WITH_AS(quickstart({"sync.bucket_mb=0.001"}), doctest::Contains("sync.bucket_mb"),
                       InputError);
}

/// Runs to the budget and checks, after every iteration, that time_to_target is set exactly
/// when some validation accuracy so far reached the target, at the end of that iteration.
bool check_time_to_target(const std::string& target) {
  const Scenario scenario =
      quickstart({"training.target_accuracy=" + target, "training.budget_epochs=8"});
  TrainingRun run(scenario, 11);
  const std::vector<int> batches(run.workers(), 128);
  std::optional<TimePoint> crossed;
  std::size_t validations = 0;
  while (!run.budget_exhausted()) {
    const IterationRecord& record = run.step(batches);
    if (record.validation_accuracy) {
      ++validations;
      CHECK(run.validation_accuracy() == record.validation_accuracy);
      if (!crossed && *record.validation_accuracy >= scenario.training.target_accuracy) {
        crossed = record.end;
      }
    }
    REQUIRE(run.reached_target() == crossed.has_value());
    REQUIRE(run.time_to_target() == crossed);
  }
  CHECK(validations == 8);
  return crossed.has_value();
}

TEST_CASE("time to target is set exactly when validation accuracy crosses the target") {
  CHECK(check_time_to_target("0.5"));
  CHECK_FALSE(check_time_to_target("0.99"));
}

TEST_CASE("a run stops at its epoch budget") {
  const Scenario scenario = quickstart({"training.budget_epochs=3"});
  TrainingRun run(scenario, 1);
  const std::vector<int> batches(run.workers(), 128);
  double epochs_before_last = 0;
  std::int64_t epoch_ends = 0;
  while (!run.budget_exhausted()) {
    epochs_before_last = run.epochs();
    epoch_ends += run.step(batches).training.epoch_completed;
  }
  CHECK(run.epochs() >= 3);
  CHECK(epochs_before_last < 3);
  CHECK(epoch_ends == 3);
  // 3 epochs of CIFAR-10's 50,000 images at a global batch of 8 × 128.
  CHECK(run.iterations() == (3 * 50000 + 1023) / 1024);
}

TEST_CASE("a run validates as often an epoch as it is told, epoch ends among them") {
  for (const int per_epoch : {1, 4}) {
    CAPTURE(per_epoch);
    const Scenario scenario =
        quickstart({"training.budget_epochs=2",
                    "training.validations_per_epoch=" + std::to_string(per_epoch)});
    TrainingRun run(scenario, 1);
    const std::vector<int> batches(run.workers(), 128);
    std::vector<double> validated_at;
    while (!run.budget_exhausted()) {
      const IterationRecord& record = run.step(batches);
      if (record.validation_accuracy) validated_at.push_back(record.training.epoch);
      CHECK(record.validation_accuracy.has_value() == record.training.validation_due);
    }
    REQUIRE(validated_at.size() == static_cast<std::size_t>(2 * per_epoch));
    for (std::size_t i = 0; i < validated_at.size(); ++i) {
      // The first iteration at or past each point: less than one global batch (1,024 of 50,000).
      const double point = static_cast<double>(i + 1) / per_epoch;
      CHECK(validated_at[i] >= point);
      CHECK(validated_at[i] < point + 1024.0 / 50000);
    }
  }
}

TEST_CASE("a run stops at its time or iteration budget") {
  SUBCASE("time") {
    const Scenario scenario = quickstart({"training.budget_time_s=5"});
    TrainingRun run(scenario, 1);
    const std::vector<int> batches(run.workers(), 128);
    TimePoint before_last = kTimeZero;
    while (!run.budget_exhausted()) {
      before_last = run.now();
      run.step(batches);
    }
    CHECK(to_seconds(run.now()) >= 5);
    CHECK(to_seconds(before_last) < 5);
  }
  SUBCASE("iterations") {
    const Scenario scenario = quickstart({"iterations=7"});
    TrainingRun run(scenario, 1);
    const std::vector<int> batches(run.workers(), 128);
    while (!run.budget_exhausted()) run.step(batches);
    CHECK(run.iterations() == 7);
  }
}

}  // namespace
}  // namespace dynamix
