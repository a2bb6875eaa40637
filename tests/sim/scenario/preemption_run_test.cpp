// TrainingRun under preemption: elastic runs continue on the survivors, paused runs wait, and
// the same seed gives the same events and bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/scenario/training_run.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

const std::string kSpot =
    (std::filesystem::path(DYNAMIX_SOURCE_DIR) / "scenarios" / "dynamic" / "spot16_elastic.yaml")
        .string();

Scenario spot(const std::vector<std::string>& overrides = {}) {
  std::vector<std::string> all = {"preemption.rate_per_hour=60", "variability.jitter_sigma=0"};
  all.insert(all.end(), overrides.begin(), overrides.end());
  return load_scenario(kSpot, all);
}

/// What a run did, iteration by iteration: times, members, batches and training numbers.
std::vector<double> trace(const Scenario& scenario, std::uint64_t seed, int iterations) {
  TrainingRun run(scenario, seed);
  const std::vector<int> batches(run.workers(), 64);
  std::vector<double> values;
  for (int i = 0; i < iterations && !run.budget_exhausted(); ++i) {
    const IterationRecord& record = run.step(batches);
    values.push_back(static_cast<double>(record.start.time_since_epoch().count()));
    values.push_back(static_cast<double>(record.end.time_since_epoch().count()));
    values.push_back(record.training.train_loss);
    for (const WorkerIteration& w : record.workers) {
      values.insert(values.end(), {w.present ? 1.0 : 0.0, w.compute_s, w.comm_s, w.grad_var_norm});
    }
  }
  return values;
}

TEST_CASE("The same seed gives the same preemptions and bytes; another seed other ones") {
  const Scenario scenario = spot();
  const std::vector<double> first = trace(scenario, 11, 400);
  CHECK(first == trace(scenario, 11, 400));
  CHECK(first != trace(scenario, 12, 400));
}

TEST_CASE("An elastic run continues on the survivors, after the reconfiguration stall") {
  const Scenario scenario = spot();
  TrainingRun run(scenario, 3);
  const std::vector<int> batches(run.workers(), 64);
  bool shrank = false, grew = false;
  TimePoint previous_end = kTimeZero;
  for (int i = 0; i < 3000 && !run.budget_exhausted() && !(shrank && grew); ++i) {
    const std::size_t before = run.members().size();
    const IterationRecord& record = run.step(batches);
    CHECK(record.start == previous_end);
    previous_end = run.now();
    const auto present = std::count_if(record.workers.begin(), record.workers.end(),
                                       [](const WorkerIteration& w) { return w.present; });
    CHECK(static_cast<std::size_t>(present) == before);
    if (!run.membership_changed()) continue;
    CHECK(run.last_stall() >= ceil_seconds(10));
    shrank = shrank || run.members().size() < before;
    grew = grew || run.members().size() > before;
    for (std::size_t w = 0; w < run.workers(); ++w) {
      const bool member =
          std::find(run.members().begin(), run.members().end(), w) != run.members().end();
      CHECK(member == run.is_member(w));
    }
  }
  CHECK(shrank);
  CHECK(grew);
}

TEST_CASE("A paused run keeps every worker and waits until the preempted one is back") {
  const Scenario scenario = spot({"preemption.mode=pause"});
  TrainingRun run(scenario, 3);
  const std::vector<int> batches(run.workers(), 64);
  bool paused = false;
  for (int i = 0; i < 3000 && !run.budget_exhausted() && !paused; ++i) {
    run.step(batches);
    CHECK(run.members().size() == run.workers());
    CHECK_FALSE(run.membership_changed());
    // A pause lasts at least the reconfiguration and the time until a return.
    paused = run.last_stall() > ceil_seconds(10);
  }
  CHECK(paused);
}

TEST_CASE("A worker under notice says when it leaves, and runs no iteration while away") {
  const Scenario scenario = spot();
  const std::uint64_t seed = 5;
  const std::vector<Preemption> timeline =
      PreemptionSchedule(scenario.preemption, 16, seed).timeline(kTimeZero + ceil_seconds(600));
  TrainingRun run(scenario, seed);
  const std::vector<int> batches(run.workers(), 64);
  int notices = 0;
  while (!run.budget_exhausted()) {
    const IterationRecord& record = run.step(batches);
    for (const Preemption& absence : timeline) {
      const std::size_t w = absence.worker;
      if (record.workers[w].present) {
        CHECK_FALSE((absence.departure < record.end && absence.comeback > record.start));
      }
      if (!run.is_member(w) || absence.notice > run.now() || absence.departure <= run.now())
        continue;
      CHECK(run.departure(w) == absence.departure);
      ++notices;
    }
  }
  CHECK(notices > 100);
}

TEST_CASE("A pause whose workers never come back is refused, naming the key") {
  const std::string message = testing::error_of([] {
    spot({"preemption.mode=pause", "preemption.rejoin=false"});
  });
  CHECK(message.find("preemption.rejoin: expected true when preemption.mode is pause") !=
        std::string::npos);
}

}  // namespace
}  // namespace dynamix
