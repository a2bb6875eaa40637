// `dynamix sweep`: the Cartesian product of --grid scenario values (--grid-zip ones tied
// together) × policies × seeds, run on
// local threads, each episode recorded durably so that --resume reruns only what is missing;
// results.csv (deterministic bytes), timing.csv (wall times) and summary.md.
#include "apps/sweep.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>

#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "apps/policy_factory.h"
#include "apps/sweep_options.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
#include "studies/cell_records.h"
#include "studies/interrupt.h"
#include "studies/progress.h"
#include "studies/ranks.h"
#include "studies/run_directory.h"
#include "studies/sweep_engine.h"

namespace dynamix {
namespace {

/// The episodes of `plan` that `records` does not hold; each record it holds is checked.
std::vector<std::size_t> unrecorded(const SweepPlan& plan, const CellRecords& records) {
  std::vector<std::size_t> pending;
  for (std::size_t i = 0; i < plan.episodes(); ++i) {
    if (!read_record(plan, records, i)) pending.push_back(i);
  }
  return pending;
}

/// Where the episode records go, once run.json is written or, on --resume, checked.
std::filesystem::path records_folder(const SweepPlan& plan, const RunDirectory& directory,
                                     bool resume) {
  const std::string definition = describe_sweep(plan);
  if (resume) {
    check_same_sweep(directory.file("run.json"), definition);
  } else {
    write_durably(directory.file("run.json"), definition);
  }
  return directory.file("episodes");
}

}  // namespace

SweepFolder::SweepFolder(const SweepPlan& plan, const SweepRun& run)
    : directory(run.out, "sweep", run.resume ? RunDirectory::kResume : RunDirectory::kResumable),
      records(records_folder(plan, directory, run.resume)),
      pending(unrecorded(plan, records)),
      left(pending.size()) {
  pending.resize(std::min(left, static_cast<std::size_t>(run.limit)));
}

int run_queue(const SweepPlan& plan, EpisodeQueue& queue, const SweepRun& run,
              const SweepFolder& folder) {
  const InterruptScope interrupt;
  Progress progress(std::cerr, {.style = stderr_progress_style(run.quiet)});
  try {
    run_sweep_episodes(plan, queue, queue.size(), run.jobs, interrupt, progress,
                       plan.episodes() - folder.left);
  } catch (const Interrupted&) {
    progress.finish();
    std::cerr << "dynamix: interrupted; the finished episodes are kept in "
              << folder.directory.file("").parent_path().string()
              << ": run the same command with --resume to finish the sweep\n";
    return 130;
  }
  progress.finish();
  return 0;
}

int finish_sweep(const SweepPlan& plan, SweepFolder& folder) {
  if (folder.pending.size() < folder.left) {
    std::cerr << "dynamix: " << plan.episodes() - folder.left + folder.pending.size() << " of "
              << plan.episodes() << " episodes recorded in "
              << folder.directory.file("").parent_path().string()
              << "; run the same command with --resume to go on\n";
    return 0;
  }
  write_sweep_outputs(plan, folder.records, folder.directory);
  folder.directory.commit();
  std::ifstream summary(folder.directory.final_path() / "summary.md");
  std::cout << summary.rdbuf() << "\nwrote " << folder.directory.final_path().string()
            << "/{results.csv,summary.md,timing.csv,run.json}\n";
  return 0;
}

namespace {

/// The sweep as rank 0 of an MPI job: it owns --out and serves episodes to the other ranks.
int lead_sweep(Ranks& ranks, const std::function<SweepPlan()>& make_plan, const SweepRun& run) {
  std::optional<SweepPlan> plan;
  std::optional<SweepFolder> folder;
  try {
    plan.emplace(make_plan());
    folder.emplace(*plan, run);
  } catch (const InputError& error) {
    // Said before the other ranks learn of it (mpirun ends the job as one exits with an error).
    const int status = say_input_error(error);
    ranks.agree(nullptr, "sweep");
    return status;
  } catch (...) {
    ranks.agree(nullptr, "sweep");
    throw;
  }
  const std::string definition = describe_sweep(*plan);
  ranks.agree(&definition, "sweep");
  EpisodeQueue queue(folder->pending, write_to(folder->records));
  const int status =
      ranks.lead_episodes(queue, [&] { return run_queue(*plan, queue, run, *folder); });
  return status != 0 ? status : finish_sweep(*plan, *folder);
}

/// The sweep as another rank: episodes from rank 0, records back to it, nothing written here.
int follow_sweep(Ranks& ranks, const std::function<SweepPlan()>& make_plan, const SweepRun& run) {
  std::optional<SweepPlan> plan;
  try {
    plan.emplace(make_plan());
  } catch (const InputError&) {
    // Rank 0 loads the same and says what is wrong, or refuses ranks that differ.
  }
  const std::string definition = plan ? describe_sweep(*plan) : "";
  if (!ranks.agree(plan ? &definition : nullptr, "sweep")) return 2;
  const InterruptScope interrupt;
  Progress progress(std::cerr, {.style = ProgressStyle::kQuiet});
  return ranks.follow_episodes([&](EpisodeFeed& feed) {
    run_sweep_episodes(*plan, feed, plan->episodes(), run.jobs, interrupt, progress);
  });
}

}  // namespace

int run_sweep(const std::vector<std::string>& args) {
  SweepOptions given;
  if (parse_knob_command_line(args, sweep_knobs(), given)) return 0;
  SweepSpec spec = std::move(given.spec);
  const std::vector<std::string> grid = std::move(given.grid);
  const std::vector<std::string> grid_zip = std::move(given.grid_zip);
  const std::string policy_list = std::move(given.policies);
  SweepRun run = std::move(given.run);
  run.limit = given.max_episodes.value_or(std::numeric_limits<std::int64_t>::max());
  Diagnostics diagnostics = Diagnostics::on_stderr(given.strict);
  const auto make_plan = [&] {
    return make_sweep_plan(std::move(spec), grid, policy_list, make_policy, grid_zip, diagnostics);
  };
  if (mpi_world_size() > 1) {
    // A policy that needs LibTorch hands the job to dynamix-torch before the ranks join.
    std::istringstream names(policy_list);
    for (std::string name; std::getline(names, name, ',');) require_policy_kind(name, "--policies");
    Ranks ranks("sweep");
    return ranks.lead() ? lead_sweep(ranks, make_plan, run) : follow_sweep(ranks, make_plan, run);
  }
  const SweepPlan plan = make_plan();
  SweepFolder folder(plan, run);
  EpisodeQueue queue(folder.pending, write_to(folder.records));
  const int status = run_queue(plan, queue, run, folder);
  return status != 0 ? status : finish_sweep(plan, folder);
}

}  // namespace dynamix
