// `dynamix evaluate`: runs every policy on every scenario for N seeds and writes results.csv and
// summary.md (reach-aware ranks, 95% bootstrap intervals, ratios to the best static batch and
// the best heuristic, and with --oracle the headroom each policy captures).
#include "apps/evaluate.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>

#include "apps/command_line.h"
#include "apps/evaluate_options.h"
#include "apps/knob_options.h"
#include "apps/learned_policy.h"
#include "apps/oracle.h"
#include "apps/policy_factory.h"
#include "gym/batch_size_env.h"
#include "gym/scenario_source.h"
#include "sim/io/diagnostics.h"
#include "sim/io/durable_file.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/scenario/scenario_names.h"
#include "studies/evaluation.h"
#include "studies/interrupt.h"
#include "studies/oracle.h"
#include "studies/progress.h"
#include "studies/provenance.h"
#include "studies/ranks.h"
#include "studies/run_directory.h"
#include "studies/version.h"

namespace dynamix {
namespace {

/// Parses the options; false when --help was printed.
bool parse_args(const std::vector<std::string>& args, EvaluateOptions& a) {
  if (parse_knob_command_line(args, evaluate_knobs(), a)) return false;
  if (a.scenario_paths.empty()) a.scenario_paths.push_back(kDefaultScenario);
  return true;
}

/// What an evaluation runs, loaded alike on every rank.
struct Evaluation {
  EvaluateOptions a;
  EnvOptions base;
  std::vector<PolicyEntry> entries;
  std::vector<std::shared_ptr<const Scenario>> scenarios;
};

Evaluation load_evaluation(const EvaluateOptions& a) {
  Evaluation e{a, {}, {}, {}};
  e.base = a.env;
  e.base.decision_interval = a.decision_interval.value_or(a.env.decision_interval);
  e.base.stop_at_target = false;
  e.entries = parse_policy_entries(a.policy_list);
  require_evaluation_fits(a, e.entries.size());
  resolve_env_options(e.entries, e.base, a.decision_interval.has_value());
  Diagnostics diagnostics = Diagnostics::on_stderr(a.strict);
  for (const std::string& path : a.scenario_paths) {
    if (a.family == 0) {
      e.scenarios.push_back(std::make_shared<const Scenario>(
          load_scenario(resolve_scenario(path), a.overrides, diagnostics)));
      continue;
    }
    const ScenarioSampler sampler(
        training_family(resolve_scenario(path), a.overrides, a.family_budget), diagnostics);
    for (int sample = 1; sample <= a.family; ++sample) {
      e.scenarios.push_back(sampler.scenario_for(static_cast<std::uint64_t>(sample)));
    }
  }
  return e;
}

/// What the ranks of one MPI job compare: the same text, the same evaluation.
std::string describe(const Evaluation& e, const std::vector<std::string>& args) {
  std::string text = std::string(kDynamixVersion) + '\n';
  for (const std::string& arg : args) text += arg + '\n';
  for (const PolicyEntry& entry : e.entries) {
    text += entry.label + '=' + entry.spec + ' ' +
            std::to_string(entry.env_options.decision_interval) + '\n';
  }
  for (const auto& scenario : e.scenarios) text += scenario->resolved.to_yaml() + '\n';
  return text;
}

/// The oracle's schedule per scenario ("" where none reached the target on every seed), each
/// search one episode of `spread` on a.jobs threads of its own; on every rank.
std::vector<std::string> search_oracles(const Evaluation& e, Ranks* ranks,
                                        const InterruptScope& interrupt,
                                        const std::function<void(double)>& show) {
  std::atomic<double> searching{0};
  const auto search = [&](std::size_t i, const std::function<void()>& check_stop) {
    OracleOptions options;
    options.jobs = e.a.jobs;
    options.observer = [&check_stop](const TrainingRun&, const IterationRecord&) { check_stop(); };
    const OracleResult result = search_schedules(
        e.scenarios[i], e.base, static_cast<std::uint64_t>(e.a.first_seed), e.a.seeds, options,
        [&](int done, int total) { searching = static_cast<double>(done) / total; });
    searching = 0;
    return result.best ? result.best->name : std::string();
  };
  std::vector<std::string> names = spread_episodes(
      ranks, e.scenarios.size(), 1, search, interrupt,
      [&](std::size_t kept) { show(static_cast<double>(kept) + searching.load()); });
  if (ranks != nullptr) names = ranks->share(std::move(names));
  return names;
}

/// One (scenario, entry) pair: its own environment and policy instances.
using Task = std::pair<std::shared_ptr<const Scenario>, PolicyEntry>;

/// Every task's episodes over the seeds, in task order; on another rank than 0, none.
std::vector<EpisodeResult> run_tasks(const std::vector<Task>& tasks, const Evaluation& e,
                                     Ranks* ranks, const InterruptScope& interrupt,
                                     const std::function<void(double)>& show) {
  const auto seeds = static_cast<std::size_t>(e.a.seeds);
  const auto episode = [&](std::size_t i, const std::function<void()>& check_stop) {
    const auto& [scenario, entry] = tasks[i / seeds];
    BatchSizeEnv env(std::make_shared<FixedScenario>(scenario), entry.env_options);
    env.set_iteration_observer(
        [&check_stop](const TrainingRun&, const IterationRecord&) { check_stop(); });
    // A fresh policy per episode, seeded by the episode: no state carries across seeds.
    const auto seed = static_cast<std::uint64_t>(e.a.first_seed) + i % seeds;
    const auto policy = make_policy(entry.spec, seed, entry.env_options, "--policies");
    return episode_record(run_episode(env, *policy, seed));
  };
  const std::vector<std::string> records = spread_episodes(
      ranks, tasks.size() * seeds, e.a.jobs, episode, interrupt,
      [&](std::size_t kept) { show(static_cast<double>(kept) / static_cast<double>(seeds)); });
  if (ranks != nullptr && !ranks->lead()) return {};
  std::vector<EpisodeResult> results;
  results.reserve(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& [scenario, entry] = tasks[i / seeds];
    EpisodeResult result = parse_episode_record(records[i]);
    result.scenario = scenario->name;
    result.policy = entry.label;
    if (entry.oracle) result.kind = PolicyKind::kOracle;
    results.push_back(std::move(result));
  }
  return results;
}

/// run.json: evaluate's options from its table (keyed as Python names them), each entry's label,
/// policy and decision interval, and the provenance: the build and the bytes of every
/// scenario and policy file read.
void write_run_json(const std::filesystem::path& file, const Evaluation& e) {
  std::vector<std::string> inputs;
  for (const std::string& path : e.a.scenario_paths) inputs.push_back(resolve_scenario(path));
  for (const PolicyEntry& entry : e.entries) {
    if (entry.spec.starts_with("ppo:")) {
      inputs.push_back(parse_policy_file(entry.spec.substr(4), "--policies").file);
    }
  }
  std::ostringstream text;
  JsonWriter json(text);
  json.begin_object();
  json.key("dynamix_version");
  json.value(kDynamixVersion);
  json.key("command");
  json.value("evaluate");
  json.key("provenance");
  write_provenance(json, inputs);
  write_knob_values(json, evaluate_knobs(), e.a);
  json.key("entries");
  json.begin_array();
  for (const PolicyEntry& entry : e.entries) {
    json.begin_object();
    json.key("label");
    json.value(entry.label);
    json.key("policy");
    json.value(entry.spec);
    json.key("decision_interval");
    json.value(entry.env_options.decision_interval);
    json.end_object();
  }
  json.end_array();
  json.end_object();
  text << '\n';
  write_durably(file, text.str());
}

/// results.csv, summary.md and run.json, committed; the summary printed.
void write_results(RunDirectory& directory, const std::vector<EpisodeResult>& results,
                   const Evaluation& e) {
  const std::string& out = e.a.out;
  write_run_json(directory.file("run.json"), e);
  {
    std::ofstream csv(directory.file("results.csv"));
    write_results_csv(csv, results);
    std::ofstream markdown(directory.file("summary.md"));
    write_summary_markdown(markdown, results);
    const bool rules = has_rule_choices(results);
    if (rules) {
      markdown << '\n';
      write_rule_choices_markdown(markdown, results);
      std::ofstream choices(directory.file("rule_choices.csv"));
      write_rule_choices_csv(choices, results);
      if (!choices) throw InputError(out, 0, "", "writable result files");
    }
    if (!csv || !markdown) throw InputError(out, 0, "", "writable result files");
  }
  directory.commit();
  std::ifstream summary(directory.final_path() / "summary.md");
  std::cout << summary.rdbuf() << "\nwrote " << directory.final_path().string()
            << "/{results.csv,summary.md" << (has_rule_choices(results) ? ",rule_choices.csv" : "")
            << ",run.json}\n";
}

/// Runs the evaluation here (`ranks` null) or as one rank of an MPI job; `directory` is where
/// the results go, null on ranks other than 0, which stay quiet.
int evaluate(const Evaluation& e, Ranks* ranks, RunDirectory* directory) {
  const InterruptScope interrupt;
  Progress progress(std::cerr, {.style = directory != nullptr ? stderr_progress_style(e.a.quiet)
                                                              : ProgressStyle::kQuiet});
  const double searches = e.a.oracle ? static_cast<double>(e.scenarios.size()) : 0.0;
  const double total = static_cast<double>(e.scenarios.size() * e.entries.size()) + searches;
  std::vector<std::string> oracles(e.scenarios.size());
  if (e.a.oracle) {
    oracles = search_oracles(e, ranks, interrupt, [&](double done) {
      progress.update(done / total, "oracle search " + std::to_string(static_cast<int>(done)) +
                                        "/" + std::to_string(e.scenarios.size()));
    });
  }
  std::vector<Task> tasks;
  for (std::size_t i = 0; i < e.scenarios.size(); ++i) {
    for (const PolicyEntry& entry : e.entries) tasks.emplace_back(e.scenarios[i], entry);
    if (!oracles[i].empty()) {
      tasks.emplace_back(e.scenarios[i], PolicyEntry{"oracle", oracles[i], e.base, true});
    } else if (e.a.oracle && directory != nullptr) {
      std::cerr << "dynamix: no schedule reached the target on every seed of "
                << e.scenarios[i]->name << "; no oracle row\n";
    }
  }
  const std::vector<EpisodeResult> results =
      run_tasks(tasks, e, ranks, interrupt, [&](double done) {
        progress.update((searches + done) / total,
                        std::to_string(static_cast<int>(done * e.a.seeds)) + "/" +
                            std::to_string(tasks.size() * static_cast<std::size_t>(e.a.seeds)) +
                            " episodes");
      });
  progress.finish();
  if (directory != nullptr) write_results(*directory, results, e);
  return 0;
}

/// As one of the ranks of an MPI job: rank 0 owns --out and says what is wrong with the input.
int evaluate_over_ranks(const EvaluateOptions& a, const std::vector<std::string>& args) {
  require_policy_kinds(a.policy_list);
  Ranks ranks("evaluate");
  std::optional<Evaluation> e;
  std::optional<RunDirectory> directory;
  try {
    e.emplace(load_evaluation(a));
    if (ranks.lead()) directory.emplace(a.out, "evaluate");
  } catch (const InputError& error) {
    // Said before the other ranks learn of it: mpirun ends the job, rank 0 included, as soon as
    // one of them exits with an error.
    if (ranks.lead()) {
      const int status = say_input_error(error);
      ranks.agree(nullptr, "evaluation");
      return status;
    }
  } catch (...) {
    if (ranks.lead()) {
      ranks.agree(nullptr, "evaluation");
      throw;
    }
  }
  const std::string definition = e ? describe(*e, args) : "";
  if (!ranks.agree(e ? &definition : nullptr, "evaluation")) return 2;
  try {
    return evaluate(*e, &ranks, directory ? &*directory : nullptr);
  } catch (const RankStopped& stopped) {
    return stopped.status;
  }
}

}  // namespace

int run_evaluate(const std::vector<std::string>& args) {
  EvaluateOptions a;
  if (!parse_args(args, a)) return 0;
  if (mpi_world_size() > 1) return evaluate_over_ranks(a, args);
  const Evaluation e = load_evaluation(a);
  RunDirectory directory(a.out, "evaluate");
  return evaluate(e, nullptr, &directory);
}

}  // namespace dynamix
