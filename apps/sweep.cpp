// `dynamix sweep`: the Cartesian product of --grid scenario values × policies × seeds, run on
// local threads, each episode recorded durably so that --resume reruns only what is missing;
// results.csv (deterministic bytes), timing.csv (wall times) and summary.md.
#include "apps/sweep.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <limits>
#include <thread>

#include "apps/cell_records.h"
#include "apps/command_line.h"
#include "apps/interrupt.h"
#include "apps/policy_factory.h"
#include "apps/progress.h"
#include "apps/run_directory.h"
#include "apps/sweep_engine.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

namespace po = boost::program_options;

/// Runs the episodes without a record (at most `limit` of them) and, once every episode has
/// one, writes the outputs and commits the directory.
int run_recorded(const SweepPlan& plan, RunDirectory& directory, int jobs, std::int64_t limit,
                 bool quiet) {
  const CellRecords records(directory.file("episodes"));
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < plan.episodes(); ++i) {
    if (!records.read(i)) pending.push_back(i);
  }
  const std::size_t left = pending.size();
  pending.resize(std::min(left, static_cast<std::size_t>(limit)));
  const InterruptScope interrupt;
  Progress progress(std::cerr, {.style = stderr_progress_style(quiet)});
  try {
    run_sweep_episodes(plan, pending, records, jobs, interrupt, progress);
  } catch (const Interrupted&) {
    progress.finish();
    std::cerr << "dynamix: interrupted; the finished episodes are kept in "
              << directory.file("").parent_path().string()
              << ": run the same command with --resume to finish the sweep\n";
    return 130;
  }
  progress.finish();
  if (pending.size() < left) {
    std::cerr << "dynamix: " << plan.episodes() - left + pending.size() << " of " << plan.episodes()
              << " episodes recorded in " << directory.file("").parent_path().string()
              << "; run the same command with --resume to go on\n";
    return 0;
  }
  write_sweep_outputs(plan, records, directory);
  directory.commit();
  std::ifstream summary(directory.final_path() / "summary.md");
  std::cout << summary.rdbuf() << "\nwrote " << directory.final_path().string()
            << "/{results.csv,summary.md,timing.csv,run.json}\n";
  return 0;
}

}  // namespace

int run_sweep(const std::vector<std::string>& args) {
  SweepSpec spec;
  spec.scenario = kDefaultScenario;
  std::vector<std::string> grid;
  std::string policy_list = "static:64,static:128,static:256,goodput+proportional";
  std::string out;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::int64_t limit = std::numeric_limits<std::int64_t>::max();
  bool resume = false;
  bool quiet = false;
  po::options_description options(
      "dynamix sweep: run every combination of --grid values × policies × seeds");
  // clang-format off
  options.add_options()
      ("help,h", "print this help")
      ("scenario", po::value(&spec.scenario),
       "scenario YAML file or built-in name (default: quickstart)")
      ("grid", po::value(&grid)->composing(),
       "a scenario key and its values, KEY=V1,V2,... (as --set takes them); repeat for more axes")
      ("set", po::value(&spec.overrides)->composing(), "override a value in every cell: dotted.key=VALUE")
      ("policies", po::value(&policy_list),
       ("comma-separated policies: " + policy_names() + " (default: " + policy_list + ")").c_str())
      ("seeds", po::value(&spec.seeds)->default_value(spec.seeds), "seeds per cell and policy")
      ("seed", po::value(&spec.first_seed)->default_value(spec.first_seed), "first seed")
      ("decision-interval", po::value(&spec.decision_interval)->default_value(spec.decision_interval),
       "iterations between decisions, k")
      ("jobs,j", po::value(&jobs)->default_value(jobs), "episodes run at once, on threads")
      ("resume", po::bool_switch(&resume),
       "continue the interrupted sweep in OUT.partial (same options); without it OUT.partial is "
       "started afresh")
      ("max-episodes", po::value(&limit),
       "run at most this many of the episodes left, then stop, resumable (e.g. per batch job)")
      ("quiet,q", po::bool_switch(&quiet), "print no progress on stderr")
      ("out", po::value(&out)->required(), "run directory to write");
  // clang-format on
  po::variables_map values;
  if (parse_command_line(args, options, values)) return 0;
  require_in_range("--seeds", spec.seeds, 1);
  require_in_range("--seed", spec.first_seed, 0);
  require_in_range("--decision-interval", spec.decision_interval, 1);
  require_in_range("--jobs", jobs, 1, 1024);
  require_in_range("--max-episodes", limit, 1);
  const SweepPlan plan = make_sweep_plan(std::move(spec), grid, policy_list, make_policy);
  RunDirectory directory(out, "sweep", resume ? RunDirectory::kResume : RunDirectory::kResumable);
  const std::string definition = describe_sweep(plan);
  if (resume) {
    check_same_sweep(directory.file("run.json"), definition);
  } else {
    write_durably(directory.file("run.json"), definition);
  }
  return run_recorded(plan, directory, jobs, limit, quiet);
}

}  // namespace dynamix
