// `dynamix oracle`: searches one- to three-phase global-batch schedules with the speed-balanced
// split on each scenario and writes every schedule tried (schedules.csv) and the best
// (summary.md); the best is a policy evaluate runs as written ("schedule:...").
#include "apps/oracle.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>

#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "apps/oracle_options.h"
#include "apps/oracle_rollout.h"
#include "gym/env_knobs.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/scenario/scenario_names.h"
#include "studies/episode_feed.h"
#include "studies/interrupt.h"
#include "studies/oracle.h"
#include "studies/progress.h"
#include "studies/run_directory.h"

namespace dynamix {
namespace {

void write_schedules_csv(std::ostream& out, const std::string& scenario,
                         const OracleResult& result) {
  for (const ScheduleOutcome& outcome : result.tried) {
    out << scenario << ',' << outcome.name << ',' << outcome.seeds << ',' << outcome.reached << ','
        << (outcome.reached == outcome.seeds ? format_number(outcome.mean_time_s) : "") << ','
        << format_number(outcome.mean_epochs) << '\n';
  }
}

void write_best(std::ostream& out, const std::string& scenario, const OracleResult& result) {
  out << "| " << scenario << " | ";
  if (!result.best) {
    out << "none reached the target on every seed | | |\n";
    return;
  }
  out << result.best->name << " | " << format_rounded(result.best->mean_time_s) << " | "
      << result.tried.size() << " |\n";
}

/// Parses the options; false when --help was printed.
bool parse_args(const std::vector<std::string>& args, OracleArgs& a) {
  if (parse_knob_command_line(args, oracle_knobs(), a)) return false;
  require_search_fits(a.seeds);
  if (a.rollout && a.hindsight) {
    throw InputError("--rollout", 0, "", "either --rollout or --hindsight", "both");
  }
  if (a.rollout_rules && !a.rollout) {
    throw InputError("--rollout-rules", 0, "", "--rollout as well", "--rollout-rules alone");
  }
  if (a.scenario_paths.empty()) a.scenario_paths.push_back(kDefaultScenario);
  return true;
}

void write_schedule_search(const OracleArgs& a,
                           const std::vector<std::shared_ptr<const Scenario>>& scenarios,
                           const IterationObserver& observer, std::ostream& csv,
                           std::ostream& markdown) {
  csv << "scenario,schedule,seeds,reached,mean_time_to_target_s,mean_epochs\n";
  markdown << "# Oracle\n\nThe fastest global-batch schedule (per-worker mean batch, from the "
              "epoch given, split by measured speed"
           << (a.hindsight ? " and each seed's straggler timeline" : "")
           << ") that reached the target on every one of " << a.seeds
           << " seeds; evaluate runs it as `--policies " << (a.hindsight ? "hindsight" : "schedule")
           << ":...`.\n\n"
           << "| scenario | best schedule | mean time to target (s) | schedules tried |\n"
           << "|---|---|---|---|\n";
  OracleOptions search;
  search.jobs = a.jobs;
  search.hindsight = a.hindsight;
  search.observer = observer;
  for (const auto& scenario : scenarios) {
    Progress progress(std::cerr, {.style = stderr_progress_style(a.quiet)});
    const OracleResult result = search_schedules(
        scenario, a.env_options, static_cast<std::uint64_t>(a.first_seed), a.seeds, search,
        [&](int done, int total) {
          progress.update(static_cast<double>(done) / total,
                          scenario->name + " " + std::to_string(done) + " episodes");
        });
    progress.finish();
    write_schedules_csv(csv, scenario->name, result);
    write_best(markdown, scenario->name, result);
  }
}

}  // namespace

void require_search_fits(int seeds) {
  const int finalists = OracleOptions{}.finalists;
  require_episodes_fit(
      "--seeds", {static_cast<std::size_t>(finalists), static_cast<std::size_t>(seeds)},
      std::to_string(finalists) + " finalists × " + std::to_string(seeds) + " seeds");
}

int run_oracle(const std::vector<std::string>& args) {
  OracleArgs a;
  if (!parse_args(args, a)) return 0;
  std::vector<std::shared_ptr<const Scenario>> scenarios;
  Diagnostics diagnostics = Diagnostics::on_stderr(false);
  for (const std::string& path : a.scenario_paths) {
    scenarios.push_back(std::make_shared<const Scenario>(
        load_scenario(resolve_scenario(path), a.overrides, diagnostics)));
  }
  RunDirectory directory(a.out, "oracle");
  const InterruptScope interrupt;
  const IterationObserver observer = [&interrupt](const TrainingRun&, const IterationRecord&) {
    interrupt.check();
  };
  const std::string csv_name = a.rollout ? "rollout.csv" : "schedules.csv";
  {
    std::ofstream csv(directory.file(csv_name));
    std::ofstream markdown(directory.file("summary.md"));
    if (a.rollout && a.rollout_rules) {
      write_rule_rollouts(a, scenarios, observer, csv, markdown);
    } else if (a.rollout) {
      write_rollouts(a, scenarios, observer, csv, markdown);
    } else {
      write_schedule_search(a, scenarios, observer, csv, markdown);
    }
    csv.close();
    markdown.close();
    if (!csv || !markdown) throw InputError(a.out, 0, "", "writable result files");
  }
  directory.commit();
  std::ifstream summary(directory.final_path() / "summary.md");
  std::cout << summary.rdbuf() << "\nwrote " << directory.final_path().string() << "/{" << csv_name
            << ",summary.md}\n";
  return 0;
}

}  // namespace dynamix
