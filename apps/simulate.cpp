// `dynamix simulate`: runs one scenario under a static batch, an epoch schedule or a policy and
// writes windows.csv or iterations.csv (--record), validation.csv, summary.json and, for a
// policy, decisions.csv.
#include "apps/simulate.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "apps/batch_plan.h"
#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "apps/policy_factory.h"
#include "apps/simulate_options.h"
#include "gym/env_knobs.h"
#include "gym/episode_log.h"
#include "gym/scenario_source.h"
#include "policies/export/policy_metadata.h"
#include "sim/core/check.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_names.h"
#include "sim/scenario/training_run.h"
#include "studies/evaluation.h"
#include "studies/interrupt.h"
#include "studies/iteration_log.h"
#include "studies/run_directory.h"

namespace dynamix {
namespace {

namespace po = boost::program_options;

/// Workers of one GPU type and memory limit: "on worker a" or "on workers a, b, c and 2 more".
struct MemoryGroup {
  std::string gpu;
  int limit = 0;
  std::vector<std::string> workers;

  std::string describe(const std::string& workload) const {
    constexpr std::size_t kNamed = 3;
    std::string names;
    for (std::size_t i = 0; i < std::min(kNamed, workers.size()); ++i)
      names += (i == 0 ? "" : ", ") + workers[i];
    if (workers.size() > kNamed)
      names += " and " + std::to_string(workers.size() - kNamed) + " more";
    return "at most " + std::to_string(limit) + " on worker" + (workers.size() > 1 ? "s " : " ") +
           names + " (" + gpu + " memory, " + workload + ")";
  }
};

/// Refuses a plan some worker's memory cannot hold, naming every group of workers that is over
/// its limit, so that one refusal shows all that must change.
void check_memory(const BatchPlan& plan, const TrainingRun& run, double epochs,
                  const std::string& option) {
  const auto& batches = plan.at_epoch(epochs);
  std::vector<MemoryGroup> groups;
  std::optional<int> found;
  for (std::size_t w = 0; w < run.workers(); ++w) {
    if (batches[w] <= run.max_batch(w)) continue;
    if (!found) found = batches[w];
    const auto same = [&](const MemoryGroup& group) {
      return group.gpu == run.node(w).gpu && group.limit == run.max_batch(w);
    };
    auto group = std::find_if(groups.begin(), groups.end(), same);
    if (group == groups.end())
      group = groups.insert(groups.end(), {run.node(w).gpu, run.max_batch(w), {}});
    group->workers.push_back(run.node(w).name);
  }
  if (groups.empty()) return;
  std::string expected = "a batch of ";
  for (std::size_t g = 0; g < groups.size(); ++g)
    expected += (g == 0 ? "" : "; ") + groups[g].describe(run.workload().name);
  throw InputError(option, 0, "", expected, std::to_string(*found));
}

/// Why the run ended: the checks of TrainingRun::budget_exhausted in its order, after the target.
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

/// The network's share of the summary, from the run's log.
RunReport network_report(RunReport report, const IterationLog& log, const Scenario& scenario) {
  report.rto_wait_fraction = rto_wait_fraction(log, scenario);
  if (!log.first_batches().empty()) {
    report.loss_slowdown = loss_slowdown(scenario, log.first_batches(), kLossProbeIterations);
  }
  return report;
}

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

/// Writes summary.json, commits the run directory and prints the summary.
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

int simulate_policy(const Scenario& scenario, PolicyRun options, const std::string& out) {
  const std::unique_ptr<Policy> policy =
      make_policy(options.name, scenario.seed, options.env_options, "--policy");
  EnvOptions& env_options = options.env_options;
  env_options.decision_interval = resolve_decision_interval(
      *policy, "the policy", env_options.decision_interval, options.decision_interval_given);
  env_options.stop_at_target = options.stop_at_target;
  BatchSizeEnv env(std::make_shared<FixedScenario>(std::make_shared<const Scenario>(scenario)),
                   env_options);
  RunDirectory directory(out, "simulate");
  IterationLog iterations(directory, options.record, env_options.decision_interval);
  const InterruptScope interrupt;
  env.set_iteration_observer(
      [&iterations, &interrupt](const TrainingRun& run, const IterationRecord& record) {
        interrupt.check();
        iterations.add(run, record);
      });
  DecisionLog log;
  const EpisodeResult result = run_episode(env, *policy, scenario.seed, &log);
  if (!result.feasible) {
    throw InputError("--policy", 0, "",
                     "a static batch that every worker's memory and the batch bounds hold",
                     "'" + options.name + "'");
  }
  iterations.close();
  {
    std::ofstream decisions(directory.file("decisions.csv"));
    log.write_csv(decisions);
    if (!decisions)
      throw InputError(directory.file("decisions.csv").string(), 0, "", "a writable file");
  }
  finish_run(
      directory, scenario, env.run(),
      network_report({.plan = "policy:" + policy->name(),
                      .record = options.record,
                      .stop_reason = stop_reason(scenario, env.run(), options.stop_at_target),
                      .samples = iterations.samples(),
                      .episode_return = result.episode_return},
                     iterations, scenario));
  return 0;
}

RecordMode parse_record(const std::string& text) {
  const std::optional<RecordMode> mode = parse_record_mode(text);
  if (!mode) throw InputError("--record", 0, "", "iterations, windows or none", "'" + text + "'");
  return *mode;
}

/// The scenario with --seed and --iterations applied, after the options' checks.
Scenario checked_scenario(SimulateOptions& o, const po::variables_map& values) {
  read_knob_options(values, simulate_knobs(), o);
  o.policy.record = parse_record(o.record);
  o.policy.decision_interval_given = !given_texts(values, "decision-interval").empty();
  Diagnostics diagnostics = Diagnostics::on_stderr(o.strict);
  ScenarioSpec spec =
      load_scenario(resolve_scenario(o.scenario_path), o.overrides, diagnostics).spec();
  if (o.seed) spec.seed = static_cast<std::uint64_t>(*o.seed);
  if (o.iterations) spec.max_iterations = *o.iterations;
  Scenario scenario(std::move(spec));
  if (!o.policy.name.empty() &&
      (!o.batch_size.empty() || !o.batch_sizes.empty() || !o.schedule.empty())) {
    throw InputError("--policy", 0, "", "no --batch-size, --batch-sizes or --schedule beside it",
                     "both");
  }
  return scenario;
}

/// The run under a static batch or an epoch schedule.
int simulate_plan(const Scenario& scenario, const SimulateOptions& o) {
  TrainingRun run(scenario, scenario.seed);
  const BatchPlan plan =
      BatchPlan::parse(o.batch_size, o.batch_sizes, o.schedule, run.workers(), scenario.batch_size);
  const std::string option = !o.batch_sizes.empty()  ? "--batch-sizes"
                             : !o.schedule.empty()   ? "--schedule"
                             : !o.batch_size.empty() ? "--batch-size"
                                                     : scenario.source + ": batch_size";
  check_memory(plan, run, 0, option);
  RunDirectory directory(o.out, "simulate");
  IterationLog log(directory, o.policy.record, o.policy.env_options.decision_interval);
  const InterruptScope interrupt;
  std::int64_t last_epoch = 0;
  while (!run.budget_exhausted() && !(o.policy.stop_at_target && run.reached_target())) {
    interrupt.check();
    if (static_cast<std::int64_t>(run.epochs()) != last_epoch) {
      check_memory(plan, run, run.epochs(), option);
      last_epoch = static_cast<std::int64_t>(run.epochs());
    }
    log.add(run, run.step(plan.at_epoch(run.epochs())));
  }
  log.close();
  finish_run(directory, scenario, run,
             network_report({.plan = plan.description(),
                             .record = o.policy.record,
                             .stop_reason = stop_reason(scenario, run, o.policy.stop_at_target),
                             .samples = log.samples(),
                             .episode_return = std::nullopt},
                            log, scenario));
  return 0;
}

}  // namespace

int run_simulate(const std::vector<std::string>& args) {
  SimulateOptions o;
  const po::options_description options = describe_knob_options(simulate_knobs());
  po::variables_map values;
  if (parse_command_line(args, options, values)) return 0;
  const Scenario scenario = checked_scenario(o, values);
  if (!o.policy.name.empty()) return simulate_policy(scenario, o.policy, o.out);
  return simulate_plan(scenario, o);
}

}  // namespace dynamix
