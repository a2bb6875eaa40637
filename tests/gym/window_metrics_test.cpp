// WindowMetrics: folding simulated iterations, and the CSV form that replays real workers.
#include "gym/window_metrics.h"

#include <doctest/doctest.h>

#include <sstream>

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

TEST_CASE("Window metrics read from CSV give the same observations as the simulator's") {
  BatchSizeEnv env(std::make_shared<FixedScenario>(
                       std::make_shared<const Scenario>(load_scenario(kDefaultScenario))),
                   evaluation_env_options());
  env.reset(5);
  std::vector<WindowMetrics> windows{env.window()};
  std::vector<Observation> live(1);
  env.observation_builder().build(env.window(), live.back());
  const std::vector<int> actions(env.workers(), 4);
  for (int decision = 0; decision < 5; ++decision) {
    const StepResult step = env.step(actions);
    windows.push_back(env.window());
    live.push_back(step.observation);
  }
  std::stringstream file;
  write_window_metrics_csv(file, windows);
  const std::vector<WindowMetrics> replayed = read_window_metrics_csv(file, "replay.csv");
  REQUIRE(replayed.size() == windows.size());
  const ObservationBuilder builder;
  for (std::size_t i = 0; i < replayed.size(); ++i) {
    CHECK(replayed[i].workers.size() == windows[i].workers.size());
    CHECK(replayed[i].time_s == windows[i].time_s);
    Observation observation;
    builder.build(replayed[i], observation);
    CHECK(observation.values == live[i].values);
  }
}

std::string replay_error(const std::string& text) {
  std::istringstream in(text);
  try {
    read_window_metrics_csv(in, "worker.csv");
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

TEST_CASE("Malformed window metrics name the file, line and column") {
  std::stringstream good;
  WindowMetrics window;
  window.workers.resize(2);
  write_window_metrics_csv(good, {window});
  const std::string text = good.str();
  const std::string header = text.substr(0, text.find('\n') + 1);
  const std::string row0 =
      text.substr(header.size(), text.find('\n', header.size()) + 1 - header.size());

  CHECK(replay_error("") == "worker.csv:1: expected the header " +
                                header.substr(0, header.size() - 1) + ", found an empty file");
  CHECK(replay_error("time,x\n").starts_with("worker.csv:1: expected the header"));
  std::string bad_number = row0;
  bad_number.replace(bad_number.find(",0,0,0,0,0,0,0,0,0,"), 4, ",0,x");
  CHECK(replay_error(header + bad_number) ==
        "worker.csv:2: time_s: expected a finite number, found 'x'");
  CHECK(replay_error(header + "1" + row0.substr(1)) ==
        "worker.csv:2: window: expected window 0 (windows numbered in order), found '1'");
  CHECK(replay_error(header + row0 + row0).starts_with("worker.csv:3: worker: expected worker 1"));
  CHECK(replay_error(header + "0,1\n") == "worker.csv:2: expected 23 fields, found 2");
}

}  // namespace
}  // namespace dynamix
