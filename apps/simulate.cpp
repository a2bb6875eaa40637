// `dynamix simulate`: runs one scenario under a static batch, an epoch schedule or a policy and
// writes windows.csv or iterations.csv (--record), validation.csv, summary.json and, for a
// policy, decisions.csv.
#include "apps/simulate.h"

#include <algorithm>
#include <boost/program_options.hpp>
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
#include "apps/simulate_report.h"
#include "gym/env_knobs.h"
#include "gym/episode_log.h"
#include "gym/scenario_source.h"
#include "policies/export/policy_metadata.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
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
