// summary.json and the printed summary of `dynamix simulate`.
#include "apps/simulate_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

#include "sim/core/check.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "studies/version.h"

namespace dynamix {
namespace {

/// Above this share of communication time in timeouts, the summary warns that loss, not
/// bandwidth, sets the run's pace.
constexpr double kRtoWarningFraction = 0.5;

/// Each timeout counted at the minimum RTO (the RTT it adds is microseconds); this is the
/// timeout term of Padhye's TCP rate, which dominates it once loss reaches about 1e-4.
double rto_wait_fraction(const IterationLog& log, const Scenario& scenario) {
  if (log.comm_s() <= 0) return 0;
  return std::min(1.0, log.timeouts() * to_seconds(scenario.network.min_rto) / log.comm_s());
}

/// Past this factor, packet loss takes most of an iteration's time and the summary warns.
constexpr double kLossWarningSlowdown = 2;
/// Iterations of the loss probe: the run's first ones, at its first batches, with and without
/// the links' loss (a few suffice: the factor is the network's, not the training's).
constexpr std::int64_t kLossProbeIterations = 10;

void write_summary(const std::filesystem::path& file, const Scenario& scenario,
                   const TrainingRun& run, const RunReport& report,
                   std::optional<double> time_to_target) {
  std::ofstream summary_file(file);
  JsonWriter json(summary_file);
  const double total_s = to_seconds(run.now());
  json.begin_object();
  json.key("dynamix_version");
  json.value(kDynamixVersion);
  json.key("scenario");
  json.value(scenario.name);
  json.key("seed");
  json.value(static_cast<std::int64_t>(scenario.seed));
  json.key("batch_plan");
  json.value(report.plan);
  json.key("record");
  json.value(record_mode_name(report.record));
  json.key("workers");
  json.value(run.workers());
  json.key("iterations");
  json.value(run.iterations());
  json.key("epochs");
  json.value(run.epochs());
  json.key("total_time_s");
  json.value(total_s);
  json.key("mean_iteration_s");
  json.value(run.iterations() > 0 ? total_s / static_cast<double>(run.iterations()) : 0.0);
  json.key("samples");
  json.value(report.samples);
  json.key("samples_per_s");
  json.value(total_s > 0 ? static_cast<double>(report.samples) / total_s : 0.0);
  json.key("stop_reason");
  json.value(report.stop_reason);
  json.key("target_accuracy");
  json.value(scenario.training.target_accuracy);
  json.key("time_to_target_s");
  json.value(time_to_target);
  json.key("final_accuracy");
  json.value(run.validation_accuracy());
  json.key("rto_wait_fraction");
  json.value(report.rto_wait_fraction);
  json.key("loss_slowdown");
  json.value(report.loss_slowdown);
  if (report.episode_return) {
    json.key("episode_return");
    json.value(*report.episode_return);
  }
  json.key("config");
  json.value(scenario.resolved);
  json.end_object();
  if (!summary_file) throw InputError(file.string(), 0, "", "a writable file");
}

}  // namespace

// Why the run ended: the checks of TrainingRun::budget_exhausted in its order, after the target.
std::string_view stop_reason(const Scenario& scenario, const TrainingRun& run,
                             bool stop_at_target) {
  if (stop_at_target && run.reached_target()) return "target_reached";
  if (scenario.max_iterations && run.iterations() >= *scenario.max_iterations) {
    return "iteration_budget";
  }
  const TrainingOptions& training = scenario.training;
  if (training.budget_epochs && run.epochs() >= *training.budget_epochs) return "epoch_budget";
  if (training.budget_time_s && to_seconds(run.now()) >= *training.budget_time_s) {
    return "time_budget";
  }
  DYNAMIX_CHECK(false, "the run ended before its target or any budget");
  return "";
}

RunReport network_report(RunReport report, const IterationLog& log, const Scenario& scenario) {
  report.rto_wait_fraction = rto_wait_fraction(log, scenario);
  if (!log.first_batches().empty()) {
    report.loss_slowdown = loss_slowdown(scenario, log.first_batches(), kLossProbeIterations);
  }
  return report;
}

void finish_run(RunDirectory& directory, const Scenario& scenario, const TrainingRun& run,
                const RunReport& report) {
  const std::optional<double> time_to_target =
      run.time_to_target() ? std::optional(to_seconds(*run.time_to_target())) : std::nullopt;
  write_summary(directory.file("summary.json"), scenario, run, report, time_to_target);
  directory.commit();

  const double total_s = to_seconds(run.now());
  std::string files(record_file_name(report.record));
  files += files.empty() ? "validation.csv," : ",validation.csv,";
  std::cout << "scenario " << scenario.name << ": " << run.workers() << " workers, "
            << scenario.workload.name << ", " << report.plan << ", seed " << scenario.seed << '\n'
            << "  iterations        " << run.iterations() << '\n'
            << "  epochs            " << format_rounded(run.epochs()) << '\n'
            << "  total_time_s      " << format_rounded(total_s) << '\n'
            << "  samples_per_s     "
            << format_rounded(total_s > 0 ? static_cast<double>(report.samples) / total_s : 0.0)
            << '\n'
            << "  time_to_target_s  "
            << (time_to_target ? format_rounded(*time_to_target) : "not reached") << " (target "
            << format_rounded(scenario.training.target_accuracy) << ")\n"
            << "  final_accuracy    "
            << (run.validation_accuracy() ? format_rounded(*run.validation_accuracy()) : "none")
            << '\n'
            << "  stopped by        " << report.stop_reason << '\n';
  if (report.loss_slowdown > kLossWarningSlowdown) {
    std::cout << "  warning           packet loss makes iterations "
              << format_rounded(report.loss_slowdown)
              << " times as long as on the same cluster without loss (the links' loss_rate; "
                 "TCP's rate under loss, Padhye et al.): loss, not bandwidth, sets the pace"
              << (scenario.network.loss_recovery == LossRecovery::kReno
                      ? "; Linux's SACK recovery times out far less than this Reno model "
                        "(network.loss_recovery=sack, docs/network.md)"
                      : "")
              << '\n';
  } else if (report.rto_wait_fraction > kRtoWarningFraction) {
    std::cout << "  warning           retransmission timeouts take "
              << std::lround(100 * report.rto_wait_fraction) << "% of communication time ("
              << format_rounded(to_seconds(scenario.network.min_rto) * 1e3)
              << " ms minimum RTO each): packet loss (the links' loss_rate) or incast, not "
                 "bandwidth, sets the pace\n";
  }
  std::cout << "wrote " << directory.final_path().string() << "/{" << files
            << (report.episode_return ? "decisions.csv," : "") << "summary.json}\n";
}

}  // namespace dynamix
