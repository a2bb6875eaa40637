// `dynamix evaluate`: runs every policy on every scenario for N seeds and writes results.csv and
// summary.md (means, 95% bootstrap intervals, ratios to the best static batch).
#include "apps/evaluate.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "apps/command_line.h"
#include "apps/interrupt.h"
#include "apps/policy_factory.h"
#include "apps/progress.h"
#include "apps/run_directory.h"
#include "apps/scenarios.h"
#include "gym/batch_size_env.h"
#include "gym/scenario_source.h"
#include "policies/evaluation.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

namespace po = boost::program_options;

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

}  // namespace

int run_evaluate(const std::vector<std::string>& args) {
  std::vector<std::string> scenario_paths;
  std::vector<std::string> overrides;
  std::string policy_list =
      "static:64,static:128,static:256,goodput,proportional,gns,goodput+proportional";
  std::string out;
  int seeds = 5;
  std::int64_t first_seed = 1000;
  int decision_interval = 10;
  bool quiet = false;
  po::options_description options(
      "dynamix evaluate: compare batch-size policies on scenarios over seeds");
  // clang-format off
  options.add_options()
      ("help,h", "print this help")
      ("scenario", po::value(&scenario_paths)->composing(),
       "scenario YAML file or built-in name (dynamix scenarios); repeat for several "
       "(default: quickstart)")
      ("policies", po::value(&policy_list),
       ("comma-separated policies: " + policy_names() + " (default: " + policy_list + ")").c_str())
      ("seeds", po::value(&seeds)->default_value(seeds), "seeds per scenario and policy")
      ("seed", po::value(&first_seed)->default_value(first_seed), "first seed")
      ("decision-interval", po::value(&decision_interval)->default_value(decision_interval),
       "iterations between decisions, k")
      ("set", po::value(&overrides)->composing(), "override a value in every scenario: dotted.key=VALUE")
      ("quiet,q", po::bool_switch(&quiet), "print no progress on stderr")
      ("out", po::value(&out)->required(), "run directory to write");
  // clang-format on
  po::variables_map values;
  if (parse_command_line(args, options, values)) return 0;
  require_in_range("--seeds", seeds, 1);
  require_in_range("--seed", first_seed, 0);
  require_in_range("--decision-interval", decision_interval, 1);
  if (scenario_paths.empty()) scenario_paths.push_back(kDefaultScenario);
  const std::vector<std::string> names = split_list(policy_list);
  if (names.empty()) throw InputError("--policies", 0, "", "at least one policy", "none");

  EnvOptions env_options;
  env_options.decision_interval = decision_interval;
  env_options.stop_at_target = false;
  std::vector<std::shared_ptr<const Scenario>> scenarios;
  for (const std::string& path : scenario_paths) {
    scenarios.push_back(
        std::make_shared<const Scenario>(load_scenario(resolve_scenario(path), overrides)));
  }
  std::vector<std::unique_ptr<Policy>> policies;
  for (const std::string& name : names)
    policies.push_back(
        make_policy(name, static_cast<std::uint64_t>(first_seed), env_options, "--policies"));

  RunDirectory directory(out, "evaluate");
  const InterruptScope interrupt;
  std::vector<EpisodeResult> results;
  Progress progress(std::cerr, {.style = stderr_progress_style(quiet)});
  const double episodes = static_cast<double>(scenarios.size() * policies.size()) * seeds;
  for (const auto& scenario : scenarios) {
    BatchSizeEnv env(std::make_shared<FixedScenario>(scenario), env_options);
    env.set_iteration_observer(
        [&interrupt](const TrainingRun&, const IterationRecord&) { interrupt.check(); });
    for (const auto& policy : policies) {
      for (int i = 0; i < seeds; ++i) {
        results.push_back(run_episode(env, *policy, static_cast<std::uint64_t>(first_seed + i)));
        progress.update(static_cast<double>(results.size()) / episodes,
                        scenario->name + " " + policy->name() + " seed " + std::to_string(i + 1) +
                            "/" + std::to_string(seeds));
      }
    }
  }
  progress.finish();
  {
    std::ofstream csv(directory.file("results.csv"));
    write_results_csv(csv, results);
    std::ofstream markdown(directory.file("summary.md"));
    write_summary_markdown(markdown, results);
    if (!csv || !markdown) throw InputError(out, 0, "", "writable result files");
  }
  directory.commit();
  std::ifstream summary(directory.final_path() / "summary.md");
  std::cout << summary.rdbuf() << "\nwrote " << directory.final_path().string()
            << "/{results.csv,summary.md}\n";
  return 0;
}

}  // namespace dynamix
