// `dynamix evaluate`: runs every policy on every scenario for N seeds and writes results.csv and
// summary.md (reach-aware ranks, 95% bootstrap intervals, ratios to the best static batch and
// the best heuristic, and with --oracle the headroom each policy captures).
#include "apps/evaluate.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "apps/command_line.h"
#include "apps/interrupt.h"
#include "apps/policy_factory.h"
#include "apps/progress.h"
#include "apps/run_directory.h"
#include "apps/scenarios.h"
#include "gym/batch_size_env.h"
#include "gym/scenario_source.h"
#include "policies/evaluation.h"
#include "policies/oracle.h"
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

/// One entry of --policies: "SPEC" or "LABEL=SPEC".
struct PolicyEntry {
  std::string label;
  std::string spec;
  EnvOptions env_options;
  bool oracle = false;
};

PolicyEntry parse_entry(const std::string& text) {
  const std::size_t equals = text.find('=');
  const std::size_t colon = text.find(':');
  if (equals != std::string::npos && (colon == std::string::npos || equals < colon)) {
    if (equals == 0 || equals + 1 == text.size()) {
      throw InputError("--policies", 0, "", "LABEL=POLICY with both parts", "'" + text + "'");
    }
    return {text.substr(0, equals), text.substr(equals + 1), {}};
  }
  // A learned policy is labelled by its file's stem ("ppo:runs/a/policy.pt" -> "policy").
  const std::string label = text.starts_with("ppo:") && text.size() > 4
                                ? std::filesystem::path(text.substr(4)).stem().string()
                                : text;
  return {label.empty() ? text : label, text, {}};
}

std::vector<PolicyEntry> parse_entries(const std::string& list) {
  std::vector<PolicyEntry> entries;
  std::set<std::string> labels;
  for (const std::string& item : split_list(list)) {
    PolicyEntry entry = parse_entry(item);
    if (!labels.insert(entry.label).second) {
      throw InputError("--policies", 0, "", "a distinct label per policy (LABEL=POLICY)",
                       "'" + entry.label + "' twice");
    }
    entries.push_back(std::move(entry));
  }
  if (entries.empty()) throw InputError("--policies", 0, "", "at least one policy", "none");
  return entries;
}

/// Each entry's environment: the evaluation's, at a learned policy's own decision interval
/// unless --decision-interval was given.
void resolve_env_options(std::vector<PolicyEntry>& entries, const EnvOptions& base,
                         bool interval_given) {
  for (PolicyEntry& entry : entries) {
    entry.env_options = base;
    entry.env_options.decision_interval =
        resolve_decision_interval(*make_policy(entry.spec, 1, base, "--policies"), entry.label,
                                  base.decision_interval, interval_given);
  }
}

struct EvaluateArgs {
  std::vector<std::string> scenario_paths;
  std::vector<std::string> overrides;
  std::string policy_list =
      "static:32,static:64,static:128,static:256,goodput,proportional,gns,goodput+proportional";
  std::string out;
  int seeds = 5;
  std::int64_t first_seed = 1000;
  int decision_interval = 10;
  int initial_batch = kEvaluationInitialBatch;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool oracle = false;
  bool quiet = false;
  bool interval_given = false;
};

/// Parses the options; false when --help was printed.
bool parse_args(const std::vector<std::string>& args, EvaluateArgs& a) {
  po::options_description options(
      "dynamix evaluate: compare batch-size policies on scenarios over seeds");
  const std::string default_policies = a.policy_list;
  // clang-format off
  options.add_options()
      ("help,h", "print this help")
      ("scenario", po::value(&a.scenario_paths)->composing(),
       "scenario YAML file or built-in name (dynamix scenarios); repeat for several "
       "(default: quickstart)")
      ("policies", po::value(&a.policy_list),
       ("comma-separated policies, each POLICY or LABEL=POLICY: " + policy_names() +
        " (default: " + default_policies + "); ppo:PATH is labelled by the file's stem").c_str())
      ("seeds", po::value(&a.seeds)->default_value(a.seeds), "seeds per scenario and policy")
      ("seed", po::value(&a.first_seed)->default_value(a.first_seed), "first seed")
      ("decision-interval", po::value(&a.decision_interval),
       "iterations between decisions, k (default: a learned policy's own, else 10)")
      ("initial-batch", po::value(&a.initial_batch)->default_value(a.initial_batch),
       "per-worker batch every adaptive policy starts from (static and schedule policies "
       "start at their own)")
      ("oracle", po::bool_switch(&a.oracle),
       "also search global-batch schedules for the fastest that reaches the target on every "
       "seed (an upper bound) and report the headroom each policy captures")
      ("jobs,j", po::value(&a.jobs)->default_value(a.jobs),
       "policies run at once (threads); results do not depend on it")
      ("set", po::value(&a.overrides)->composing(),
       "override a value in every scenario: dotted.key=VALUE")
      ("quiet,q", po::bool_switch(&a.quiet), "print no progress on stderr")
      ("out", po::value(&a.out)->required(), "run directory to write");
  // clang-format on
  po::variables_map values;
  if (parse_command_line(args, options, values)) return false;
  a.interval_given = values.count("decision-interval") > 0;
  require_in_range("--seeds", a.seeds, 1);
  require_in_range("--seed", a.first_seed, 0);
  require_in_range("--decision-interval", a.decision_interval, 1);
  require_in_range("--initial-batch", a.initial_batch, 1);
  require_in_range("--jobs", a.jobs, 1, 256);
  if (a.scenario_paths.empty()) a.scenario_paths.push_back(kDefaultScenario);
  return true;
}

/// Shared progress for episodes finished on several threads.
class EpisodeProgress {
 public:
  EpisodeProgress(bool quiet, double total)
      : progress_(std::cerr, {.style = stderr_progress_style(quiet)}), total_(total) {}
  void add(double episodes, const std::string& status) {
    const std::lock_guard lock(mutex_);
    done_ += episodes;
    progress_.update(done_ / total_, status);
  }
  void finish() { progress_.finish(); }

 private:
  std::mutex mutex_;
  Progress progress_;
  double total_;
  double done_ = 0;
};

/// The oracle's schedule on `scenario`, as a policy entry labelled "oracle"; none when no
/// schedule reached the target on every seed.
std::optional<PolicyEntry> find_oracle(const std::shared_ptr<const Scenario>& scenario,
                                       const EvaluateArgs& a, const EnvOptions& base,
                                       const InterruptScope& interrupt, EpisodeProgress& progress) {
  OracleOptions options;
  options.jobs = a.jobs;
  options.observer = [&interrupt](const TrainingRun&, const IterationRecord&) {
    interrupt.check();
  };
  int reported = 0;
  const OracleResult result =
      search_schedules(scenario, base, static_cast<std::uint64_t>(a.first_seed), a.seeds, options,
                       [&](int done, int total) {
                         progress.add(static_cast<double>(done - reported) / total,
                                      scenario->name + " oracle search");
                         reported = done;
                       });
  if (!result.best) {
    std::cerr << "dynamix: no schedule reached the target on every seed of " << scenario->name
              << "; no oracle row\n";
    return std::nullopt;
  }
  return PolicyEntry{"oracle", result.best->name, base, true};
}

/// One (scenario, entry) pair: its own environment and policy instances.
using Task = std::pair<std::shared_ptr<const Scenario>, PolicyEntry>;

/// Every task's episodes over the seeds, in task order, run on a.jobs threads.
std::vector<EpisodeResult> run_tasks(const std::vector<Task>& tasks, const EvaluateArgs& a,
                                     const InterruptScope& interrupt, EpisodeProgress& progress) {
  std::vector<std::vector<EpisodeResult>> slots(tasks.size());
  parallel_for(static_cast<int>(tasks.size()), a.jobs, [&](int t) {
    const auto& [scenario, entry] = tasks[static_cast<std::size_t>(t)];
    BatchSizeEnv env(std::make_shared<FixedScenario>(scenario), entry.env_options);
    env.set_iteration_observer(
        [&interrupt](const TrainingRun&, const IterationRecord&) { interrupt.check(); });
    for (int i = 0; i < a.seeds; ++i) {
      // A fresh policy per episode, seeded by the episode: no state carries across seeds.
      const auto seed = static_cast<std::uint64_t>(a.first_seed + i);
      const auto policy = make_policy(entry.spec, seed, entry.env_options, "--policies");
      EpisodeResult result = run_episode(env, *policy, seed);
      result.policy = entry.label;
      if (entry.oracle) result.kind = PolicyKind::kOracle;
      slots[static_cast<std::size_t>(t)].push_back(std::move(result));
      progress.add(1.0 / a.seeds, scenario->name + " " + entry.label + " seed " +
                                      std::to_string(i + 1) + "/" + std::to_string(a.seeds));
    }
  });
  std::vector<EpisodeResult> results;
  for (auto& slot : slots) results.insert(results.end(), slot.begin(), slot.end());
  return results;
}

/// results.csv and summary.md, committed; the summary printed.
void write_results(RunDirectory& directory, const std::vector<EpisodeResult>& results,
                   const std::string& out) {
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
}

}  // namespace

int run_evaluate(const std::vector<std::string>& args) {
  EvaluateArgs a;
  if (!parse_args(args, a)) return 0;
  EnvOptions base;
  base.decision_interval = a.decision_interval;
  base.initial_batch = a.initial_batch;
  base.stop_at_target = false;
  std::vector<PolicyEntry> entries = parse_entries(a.policy_list);
  resolve_env_options(entries, base, a.interval_given);
  std::vector<std::shared_ptr<const Scenario>> scenarios;
  for (const std::string& path : a.scenario_paths) {
    scenarios.push_back(
        std::make_shared<const Scenario>(load_scenario(resolve_scenario(path), a.overrides)));
  }

  RunDirectory directory(a.out, "evaluate");
  const InterruptScope interrupt;
  EpisodeProgress progress(a.quiet,
                           static_cast<double>(scenarios.size() * (entries.size() + a.oracle)));
  std::vector<Task> tasks;
  for (const auto& scenario : scenarios) {
    for (const PolicyEntry& entry : entries) tasks.emplace_back(scenario, entry);
    if (!a.oracle) continue;
    if (auto oracle = find_oracle(scenario, a, base, interrupt, progress))
      tasks.emplace_back(scenario, *oracle);
  }
  const std::vector<EpisodeResult> results = run_tasks(tasks, a, interrupt, progress);
  progress.finish();
  write_results(directory, results, a.out);
  return 0;
}

}  // namespace dynamix
