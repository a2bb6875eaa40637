// `dynamix simulate`: runs one scenario under a static batch or an epoch schedule and writes
// iterations.csv, validation.csv and summary.json.
#include "apps/simulate.h"

#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>

#include "apps/batch_plan.h"
#include "apps/command_line.h"
#include "apps/interrupt.h"
#include "apps/policy_factory.h"
#include "apps/run_directory.h"
#include "apps/scenarios.h"
#include "gym/episode_log.h"
#include "gym/scenario_source.h"
#include "policies/evaluation.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/training_run.h"

namespace dynamix {
namespace {

namespace po = boost::program_options;

const std::vector<std::string> kIterationColumns = {
    "iteration",  "worker",          "gpu_type",       "batch_size",   "start_s",    "load_s",
    "compute_s",  "wait_s",          "comm_s",         "iteration_s",  "bytes_sent", "retransmits",
    "timeouts",   "throughput_gbps", "cpu_time_ratio", "memory_util",  "straggling", "epoch",
    "train_loss", "train_accuracy",  "grad_std_norm",  "grad_var_norm"};

void check_memory(const BatchPlan& plan, const TrainingRun& run, double epochs,
                  const std::string& option) {
  const auto& batches = plan.at_epoch(epochs);
  for (std::size_t w = 0; w < run.workers(); ++w) {
    if (batches[w] > run.max_batch(w)) {
      throw InputError(option, 0, "",
                       "a batch of at most " + std::to_string(run.max_batch(w)) + " on worker " +
                           run.node(w).name + " (" + run.node(w).gpu + " memory, " +
                           run.workload().name + ")",
                       std::to_string(batches[w]));
    }
  }
}

/// iterations.csv and validation.csv rows for one iteration.
class IterationWriter {
 public:
  explicit IterationWriter(const RunDirectory& directory)
      : iterations_(directory.file("iterations.csv"), kIterationColumns),
        validation_(directory.file("validation.csv"),
                    {"epoch", "iteration", "time_s", "validation_accuracy"}) {}

  void write(const TrainingRun& run, const IterationRecord& record) {
    const double start_s = to_seconds(record.start);
    const double iteration_s = to_seconds(record.end - record.start);
    for (std::size_t w = 0; w < record.workers.size(); ++w) {
      const WorkerIteration& row = record.workers[w];
      iterations_ << record.iteration << w << run.node(w).gpu << row.batch_size << start_s
                  << row.load_s << row.compute_s << row.wait_s << row.comm_s << iteration_s
                  << row.bytes_sent << row.retransmits << row.timeouts << row.throughput_gbps
                  << row.cpu_time_ratio << row.memory_util << (row.straggling ? 1 : 0)
                  << record.training.epoch << record.training.train_loss
                  << record.training.train_accuracy << row.grad_std_norm << row.grad_var_norm;
      iterations_.end_row();
    }
    if (record.validation_accuracy) {
      validation_ << static_cast<std::int64_t>(std::llround(record.training.epoch))
                  << record.iteration << to_seconds(record.end) << *record.validation_accuracy;
      validation_.end_row();
    }
  }

  void close() {
    iterations_.close();
    validation_.close();
  }

 private:
  CsvWriter iterations_;
  CsvWriter validation_;
};

/// Writes summary.json, commits the run directory and prints the summary.
void finish_run(RunDirectory& directory, const Scenario& scenario, const TrainingRun& run,
                const std::string& plan_description, std::optional<double> episode_return) {
  const std::optional<double> time_to_target =
      run.time_to_target() ? std::optional(to_seconds(*run.time_to_target())) : std::nullopt;
  {
    std::ofstream summary_file(directory.file("summary.json"));
    JsonWriter json(summary_file);
    json.begin_object();
    json.key("dynamix_version");
    json.value(kDynamixVersion);
    json.key("scenario");
    json.value(scenario.name);
    json.key("seed");
    json.value(static_cast<std::int64_t>(scenario.seed));
    json.key("batch_plan");
    json.value(plan_description);
    json.key("workers");
    json.value(run.workers());
    json.key("iterations");
    json.value(run.iterations());
    json.key("epochs");
    json.value(run.epochs());
    json.key("total_time_s");
    json.value(to_seconds(run.now()));
    json.key("target_accuracy");
    json.value(scenario.training.target_accuracy);
    json.key("time_to_target_s");
    json.value(time_to_target);
    json.key("final_accuracy");
    json.value(run.validation_accuracy());
    if (episode_return) {
      json.key("episode_return");
      json.value(*episode_return);
    }
    json.key("config");
    json.value(scenario.resolved);
    json.end_object();
    if (!summary_file)
      throw InputError(directory.file("summary.json").string(), 0, "", "a writable file");
  }
  directory.commit();

  std::cout << "scenario " << scenario.name << ": " << run.workers() << " workers, "
            << scenario.workload.name << ", " << plan_description << ", seed " << scenario.seed
            << '\n'
            << "  iterations        " << run.iterations() << '\n'
            << "  epochs            " << format_rounded(run.epochs()) << '\n'
            << "  total_time_s      " << format_rounded(to_seconds(run.now())) << '\n'
            << "  time_to_target_s  "
            << (time_to_target ? format_rounded(*time_to_target) : "not reached") << " (target "
            << format_rounded(scenario.training.target_accuracy) << ")\n"
            << "  final_accuracy    "
            << (run.validation_accuracy() ? format_rounded(*run.validation_accuracy()) : "none")
            << '\n'
            << "wrote " << directory.final_path().string() << "/{iterations.csv,validation.csv,"
            << (episode_return ? "decisions.csv," : "") << "summary.json}\n";
}

int simulate_policy(const Scenario& scenario, const std::string& policy_name,
                    EnvOptions env_options, bool stop_at_target, const std::string& out) {
  env_options.stop_at_target = stop_at_target;
  BatchSizeEnv env(std::make_shared<FixedScenario>(std::make_shared<const Scenario>(scenario)),
                   env_options);
  const std::unique_ptr<Policy> policy =
      make_policy(policy_name, scenario.seed, env_options, "--policy");
  RunDirectory directory(out, "simulate");
  IterationWriter writer(directory);
  const InterruptScope interrupt;
  env.set_iteration_observer(
      [&writer, &interrupt](const TrainingRun& run, const IterationRecord& record) {
        interrupt.check();
        writer.write(run, record);
      });
  DecisionLog log;
  const EpisodeResult result = run_episode(env, *policy, scenario.seed, &log);
  writer.close();
  {
    std::ofstream decisions(directory.file("decisions.csv"));
    log.write_csv(decisions);
    if (!decisions)
      throw InputError(directory.file("decisions.csv").string(), 0, "", "a writable file");
  }
  finish_run(directory, scenario, env.run(), "policy:" + policy->name(), result.episode_return);
  return 0;
}

}  // namespace

int run_simulate(const std::vector<std::string>& args) {
  std::string scenario_path = kDefaultScenario;
  std::string batch_size, batch_sizes, schedule, out;
  std::vector<std::string> overrides;
  std::int64_t seed = 0;
  std::int64_t iterations = 0;
  bool stop_at_target = false;
  std::string policy_name;
  EnvOptions env_options;
  po::options_description options("dynamix simulate: run one training job on a simulated cluster");
  // clang-format off
  options.add_options()
      ("help,h", "print this help")
      ("scenario", po::value(&scenario_path), "scenario YAML file or built-in name (dynamix scenarios; default: quickstart)")
      ("seed", po::value(&seed), "root seed (default: the scenario's)")
      ("iterations", po::value(&iterations), "stop after this many iterations")
      ("batch-size", po::value(&batch_size), "the same batch on every worker")
      ("batch-sizes", po::value(&batch_sizes), "one batch per worker: B1,B2,...")
      ("schedule", po::value(&schedule), "batch per worker from epoch E on: E0:B0,E1:B1,...")
      ("set", po::value(&overrides)->composing(), "override a scenario value: dotted.key=VALUE")
      ("policy", po::value(&policy_name),
       ("run a policy through the environment, deciding every k iterations: " + policy_names()).c_str())
      ("decision-interval", po::value(&env_options.decision_interval)
           ->default_value(env_options.decision_interval),
       "iterations between the policy's decisions, k")
      ("stop-at-target", po::bool_switch(&stop_at_target), "stop when the target accuracy is reached")
      ("out", po::value(&out)->required(), "run directory to write");
  // clang-format on
  po::variables_map values;
  if (parse_command_line(args, options, values)) return 0;
  if (values.count("iterations")) require_in_range("--iterations", iterations, 1);
  require_in_range("--seed", seed, 0);
  require_in_range("--decision-interval", env_options.decision_interval, 1);

  Scenario scenario = load_scenario(resolve_scenario(scenario_path), overrides);
  if (values.count("seed")) scenario.seed = static_cast<std::uint64_t>(seed);
  if (values.count("iterations")) scenario.max_iterations = iterations;
  if (!policy_name.empty() && (!batch_size.empty() || !batch_sizes.empty() || !schedule.empty())) {
    throw InputError("--policy", 0, "", "no --batch-size, --batch-sizes or --schedule beside it",
                     "both");
  }
  if (!policy_name.empty())
    return simulate_policy(scenario, policy_name, env_options, stop_at_target, out);
  TrainingRun run(scenario, scenario.seed);
  const BatchPlan plan =
      BatchPlan::parse(batch_size, batch_sizes, schedule, run.workers(), scenario.batch_size);
  const std::string option = !batch_sizes.empty()  ? "--batch-sizes"
                             : !schedule.empty()   ? "--schedule"
                             : !batch_size.empty() ? "--batch-size"
                                                   : scenario.source + ": batch_size";
  check_memory(plan, run, 0, option);

  RunDirectory directory(out, "simulate");
  IterationWriter writer(directory);
  const InterruptScope interrupt;
  std::int64_t last_epoch = 0;
  while (!run.budget_exhausted() && !(stop_at_target && run.reached_target())) {
    interrupt.check();
    if (static_cast<std::int64_t>(run.epochs()) != last_epoch) {
      check_memory(plan, run, run.epochs(), option);
      last_epoch = static_cast<std::int64_t>(run.epochs());
    }
    writer.write(run, run.step(plan.at_epoch(run.epochs())));
  }
  writer.close();
  finish_run(directory, scenario, run, plan.description(), std::nullopt);
  return 0;
}

}  // namespace dynamix
