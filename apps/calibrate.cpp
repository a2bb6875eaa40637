// `dynamix calibrate` and `dynamix fidelity`.
#include "apps/calibrate.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

#include "apps/calibrate_dynamics.h"
#include "apps/calibrate_options.h"
#include "apps/child_process.h"
#include "apps/command_line.h"
#include "apps/fidelity_report.h"
#include "apps/knob_options.h"
#include "dynamix_config.h"
#include "sim/calibration/calibration.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_names.h"
#include "studies/run_directory.h"

namespace dynamix {
namespace {

ClusterModel model_of(const ModelOptions& o) {
  return {
      .scenario = resolve_scenario(o.scenario), .overrides = o.overrides, .ranks_key = o.ranks_key};
}

FitSubset subset_of(const ModelOptions& o) {
  return parse_fit_subset(o.fit_kinds, o.fit_ranks, o.fit_sizes, o.fit_batches);
}

/// The embedded measurement script and the modules it imports (the sim-to-real job's
/// workloads), written into the run directory beside one another.
constexpr std::array kMeasurementFiles = {
    std::pair{"measure_cluster.py", "embedded:/scripts/measure_cluster.py"},
    std::pair{"reference_workloads.py", "embedded:/adapter/examples/reference_workloads.py"},
    std::pair{"teacher_data.py", "embedded:/adapter/examples/teacher_data.py"},
};

/// Runs the embedded measurement script into `csv` (posix_spawnp: no shell); a failure is an
/// error naming the command.
void measure_machine(RunDirectory& directory, const std::filesystem::path& csv,
                     const std::string& python, const std::string& script_options) {
  for (const auto& [name, embedded] : kMeasurementFiles) {
    std::ofstream out(directory.file(name));
    out << read_text(embedded);
    if (!out.flush()) throw std::runtime_error("cannot write " + directory.file(name).string());
  }
  const std::filesystem::path script = directory.file(kMeasurementFiles[0].first);
  std::vector<std::string> command = {python, script.string(), "--out", csv.string()};
  for (std::string& word : split_words(script_options)) command.push_back(std::move(word));
  std::string shown;
  for (const std::string& word : command) shown += (shown.empty() ? "" : " ") + word;
  std::cerr << "measuring this machine: " << shown << '\n';
  const ChildResult result = run_child(command, {.search_path = true});
  if (result.start_error != 0) {
    throw InputError("--python", 0, "", "a Python interpreter to run",
                     "'" + python + "' (" + std::strerror(result.start_error) + ")");
  }
  const int status = result.wait_status;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::string how = WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                              : "signal " + std::to_string(WTERMSIG(status));
    throw std::runtime_error("the measurement script failed (" + how + "): " + shown);
  }
}

void write_scenario(const std::filesystem::path& file, const ClusterModel& model,
                    const std::vector<std::string>& fitted, const MeasurementFile& measured,
                    Diagnostics& diagnostics) {
  std::vector<std::string> overrides = model.overrides;
  overrides.insert(overrides.end(), fitted.begin(), fitted.end());
  const Scenario scenario = load_scenario(model.scenario, overrides, diagnostics);
  std::ofstream out(file);
  out << "# Calibrated by dynamix calibrate from " << model.scenario << " and the measurements in "
      << measured.path << ":\n";
  for (const std::string& line : measured.provenance) out << "#   " << line << '\n';
  out << "# Fitted:";
  for (const std::string& value : fitted) out << ' ' << value;
  out << '\n' << scenario.resolved.to_yaml();
  if (!out.flush()) throw std::runtime_error("cannot write " + file.string());
}

}  // namespace

namespace {

void print_comparison(const std::vector<FidelityRow>& rows) {
  print_fidelity_table(std::cout, rows);
  std::cout << '\n';
  print_fidelity_summary(std::cout, rows, true, "fit");
  print_fidelity_summary(std::cout, rows, false, "held-out");
}

/// The fitted values, then measured against simulated times.
void print_fit(const Calibration& calibration) {
  const FitResult& fit = calibration.fit;
  std::cout << "fitted the knobs on " << calibration.fitted_configurations << " configurations ("
            << fit.evaluations << " evaluations, rms log error "
            << format_rounded(fit.rms_log_error) << "):";
  for (const std::string& value : fit.overrides) std::cout << "  " << value;
  std::cout << "\n\n";
  print_comparison(calibration.rows);
}

int calibrate_cluster(const std::vector<std::string>& args) {
  CalibrateOptions o;
  if (parse_knob_command_line(args, calibrate_knobs(), o)) return 0;
  const ModelOptions& model_options = o.model;
  std::vector<std::string> knob_texts = o.fit;
  const std::string& device = o.device;
  const std::string& out = o.out;
  if (knob_texts.empty()) knob_texts = default_fit_knobs(device);
  std::vector<FitKnob> knobs;
  knobs.reserve(knob_texts.size());
  for (const std::string& text : knob_texts) knobs.push_back(parse_fit_knob(text, "--fit"));
  const FitSubset subset = subset_of(model_options);
  const ClusterModel model = model_of(model_options);
  Diagnostics diagnostics = Diagnostics::on_stderr(false);
  check_model(model, diagnostics);
  RunDirectory directory(out, "calibrate");
  std::string measured_path = model_options.measured;
  if (measured_path.empty()) {
    measured_path = directory.file("measurements.csv").string();
    measure_machine(directory, measured_path, o.python, o.measure_options);
  }
  MeasurementFile measured = read_measurements(measured_path);
  if (!model_options.measured.empty()) {
    std::filesystem::copy_file(measured_path, directory.file("measurements.csv"));
  }
  const Calibration calibration = calibrate(model, measured, subset, knobs, device);
  print_fit(calibration);
  for (const std::string& line : knobs_at_bounds(knobs, calibration.fit.values)) {
    std::cerr << "dynamix: warning: " << line << '\n';
  }
  write_fidelity_csv(directory.file("fit.csv"), calibration.rows);
  write_scenario(directory.file("calibrated.yaml"), calibration.model, calibration.fit.overrides,
                 measured, diagnostics);
  directory.commit();
  std::cout << "wrote " << (directory.final_path() / "calibrated.yaml").string() << '\n';
  return 0;
}

}  // namespace

int run_calibrate(const std::vector<std::string>& args) {
  return asks_for_dynamics(args) ? run_calibrate_dynamics(args) : calibrate_cluster(args);
}

int run_fidelity(const std::vector<std::string>& args) {
  FidelityOptions o;
  if (parse_knob_command_line(args, fidelity_knobs(), o)) return 0;
  const ModelOptions& model_options = o.model;
  const FitSubset subset = subset_of(model_options);
  const MeasurementFile measured = read_measurements(model_options.measured);
  Diagnostics diagnostics = Diagnostics::on_stderr(false);
  check_model(model_of(model_options), diagnostics);
  const std::vector<FidelityRow> rows = compare(model_of(model_options), measured.rows, subset);
  print_comparison(rows);
  print_fidelity_summary(std::cout, rows, std::nullopt, "all");
  if (!o.out.empty()) {
    RunDirectory directory(o.out, "fidelity");
    write_fidelity_csv(directory.file("fidelity.csv"), rows);
    directory.commit();
    std::cout << "wrote " << (directory.final_path() / "fidelity.csv").string() << '\n';
  }
  return 0;
}

}  // namespace dynamix
