// What `dynamix simulate` reports of a run: why it stopped, what the network cost it, its
// summary.json and the summary it prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sim/scenario/scenario.h"
#include "sim/scenario/training_run.h"
#include "studies/iteration_log.h"
#include "studies/run_directory.h"

namespace dynamix {

/// Why the run ended: the checks of TrainingRun::budget_exhausted in its order, after the target.
std::string_view stop_reason(const Scenario& scenario, const TrainingRun& run, bool stop_at_target);

/// What finish_run reports beside the run itself.
struct RunReport {
  std::string plan;
  RecordMode record = RecordMode::kWindows;
  std::string_view stop_reason;
  std::int64_t samples = 0;
  std::optional<double> episode_return;
  /// Share of the communication time spent waiting out retransmission timeouts.
  double rto_wait_fraction = 0;
  /// How many times as long the first iterations take as on the same cluster without loss.
  double loss_slowdown = 1;
};

/// The network's share of the summary, from the run's log.
RunReport network_report(RunReport report, const IterationLog& log, const Scenario& scenario);

/// Writes summary.json, commits the run directory and prints the summary.
void finish_run(RunDirectory& directory, const Scenario& scenario, const TrainingRun& run,
                const RunReport& report);

}  // namespace dynamix
