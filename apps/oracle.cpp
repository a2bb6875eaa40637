// `dynamix oracle`: searches one- to three-phase global-batch schedules with the speed-balanced
// split on each scenario and writes every schedule tried (schedules.csv) and the best
// (summary.md); the best is a policy evaluate runs as written ("schedule:...").
#include "apps/oracle.h"

#include <fstream>
#include <iostream>

#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "apps/oracle_options.h"
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

namespace po = boost::program_options;

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
  po::options_description options(oracle_knobs().meaning);
  options.add_options()("help,h", "print this help");
  add_knob_options(options, oracle_knobs(), {{"jobs", 'j'}, {"quiet", 'q'}});
  po::variables_map values;
  if (parse_command_line(args, options, values)) return false;
  read_knob_options(values, oracle_knobs(), a);
  require_search_fits(a.seeds);
  if (a.scenario_paths.empty()) a.scenario_paths.push_back(kDefaultScenario);
  return true;
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
  std::ofstream csv(directory.file("schedules.csv"));
  std::ofstream markdown(directory.file("summary.md"));
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
  search.observer = [&interrupt](const TrainingRun&, const IterationRecord&) { interrupt.check(); };
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
  csv.close();
  markdown.close();
  if (!csv || !markdown) throw InputError(a.out, 0, "", "writable result files");
  directory.commit();
  std::ifstream summary(directory.final_path() / "summary.md");
  std::cout << summary.rdbuf() << "\nwrote " << directory.final_path().string()
            << "/{schedules.csv,summary.md}\n";
  return 0;
}

}  // namespace dynamix
