// `dynamix band make|check`: seeded training runs, binned, stored as a band; one more run held
// against it. Each run is a child `dynamix train` (and `dynamix evaluate`) of this executable,
// started without a shell, so that its output stays out of the band's and a crash stays its own.
#include "apps/band.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "apps/band_file.h"
#include "apps/band_options.h"
#include "apps/child_process.h"
#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "gym/observation.h"
#include "policies/export/torchscript_policy.h"
#include "sim/io/csv_table.h"
#include "sim/io/diagnostics.h"
#include "sim/io/durable_file.h"
#include "sim/io/hash.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/io/sources.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_names.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxSeeds = 64;
/// A feature whose normalization spread stayed below this never varied in training (a constant
/// feature keeps the floor 1e-4; the least varied real one is ~100 times above it).
constexpr float kConstantFeatureStd = 1e-3f;

/// The evaluation's share of the options: the scenario and its overrides.
std::vector<std::string> scenario_arguments(const std::vector<std::string>& train) {
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < train.size(); ++i) {
    const bool takes_value = train[i] == "--scenario" || train[i] == "--set";
    if (takes_value && i + 1 < train.size()) {
      kept.push_back(train[i]);
      kept.push_back(train[++i]);
    } else if (train[i].starts_with("--scenario=") || train[i].starts_with("--set=")) {
      kept.push_back(train[i]);
    }
  }
  return kept;
}

/// The fingerprint of the scenario `train` options resolve to (--scenario, else the default,
/// with every --set).
std::string scenario_fingerprint(const std::vector<std::string>& train) {
  std::string path = kDefaultScenario;
  std::vector<std::string> overrides;
  const std::vector<std::string> kept = scenario_arguments(train);
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const std::size_t equals = kept[i].find('=');
    const bool joined = kept[i].starts_with("--") && equals != std::string::npos;
    const std::string key = joined ? kept[i].substr(0, equals) : kept[i];
    const std::string value = joined ? kept[i].substr(equals + 1) : kept[++i];
    if (key == "--scenario") {
      path = value;
    } else {
      overrides.push_back(value);
    }
  }
  Diagnostics quiet;
  return hex_fingerprint(
      load_scenario(resolve_scenario(path), overrides, quiet).resolved.to_yaml());
}

/// Runs a child and turns its failure into this command's: its last stderr line, its status.
void run_step(const std::vector<std::string>& args, const fs::path& log) {
  // This executable again (dynamix-torch, which has train), its stdout discarded.
  std::error_code error;
  std::vector<std::string> command = {fs::read_symlink("/proc/self/exe", error).string()};
  command.insert(command.end(), args.begin(), args.end());
  const ChildResult result =
      run_child(command, {.stdout_path = "/dev/null", .stderr_path = log.string()});
  if (result.start_error != 0)
    throw std::runtime_error("dynamix band: could not start " + command.front());
  const int status = result.status();
  if (status == 0) return;
  std::string text = fs::exists(log) ? read_text(log.string()) : std::string();
  text.erase(text.find_last_not_of('\n') + 1);
  const std::string last =
      text.substr(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
  if (status == 2) throw InputError("dynamix " + args.front(), 0, "", "options it accepts", last);
  throw std::runtime_error("dynamix " + args.front() + " failed (status " + std::to_string(status) +
                           "): " + last);
}

std::map<int, double> binned_returns(const fs::path& curve, int bin_updates) {
  std::map<int, std::pair<double, int>> sums;
  read_csv(curve.string(), nullptr, [&](const CsvRow& row) {
    const std::optional<double> value = row.number("mean_return", false, -INFINITY, false);
    if (!value) return;
    auto& [sum, count] = sums[(row.integer("update", 1) - 1) / bin_updates];
    sum += *value;
    ++count;
  });
  std::map<int, double> means;
  for (const auto& [bin, total] : sums) means[bin] = total.first / total.second;
  return means;
}

double mean_departure_share(const fs::path& results) {
  double sum = 0;
  int rows = 0;
  read_csv(results.string(), nullptr, [&](const CsvRow& row) {
    sum += *row.number("departure_share", true, 0, false);
    ++rows;
  });
  return rows == 0 ? 0 : sum / rows;
}

/// The names of the features whose spread over training lies above kConstantFeatureStd, in
/// schema order (each worker's local features, then the global ones).
std::vector<std::string> varied_features(const fs::path& policy_file) {
  const TorchScriptPolicy policy(policy_file);
  const std::vector<float> spread = policy.observation_std();
  const ObservationBuilder builder;
  const ObservationSchema& schema = builder.schema();
  std::vector<std::string> names;
  for (const FeatureSpec& feature : schema.local) names.push_back(feature.name);
  for (const FeatureSpec& feature : schema.global) names.push_back(feature.name);
  std::vector<std::string> varied;
  for (std::size_t i = 0; i < spread.size() && i < names.size(); ++i) {
    if (spread[i] > kConstantFeatureStd) varied.push_back(names[i]);
  }
  return varied;
}

/// Trains `seed` into `out` and evaluates its policy greedily over `band.eval_seeds` episodes.
SeedRun run_seed(const Band& band, int seed, const fs::path& out, const fs::path& work) {
  std::vector<std::string> train = {"train"};
  const std::vector<std::string> options = train_arguments(band.train_options);
  train.insert(train.end(), options.begin(), options.end());
  const std::vector<std::string> own = {"--quiet", "--seed", std::to_string(seed), "--out",
                                        out.string()};
  train.insert(train.end(), own.begin(), own.end());
  const std::string tag = "seed" + std::to_string(seed);
  run_step(train, work / (tag + "-train.log"));
  std::vector<std::string> evaluate = {"evaluate"};
  const std::vector<std::string> scenario = scenario_arguments(options);
  evaluate.insert(evaluate.end(), scenario.begin(), scenario.end());
  const std::vector<std::string> episodes = {"--quiet",
                                             "--policies",
                                             "band=ppo:" + (out / "policy.pt").string(),
                                             "--seeds",
                                             std::to_string(band.eval_seeds),
                                             "--out",
                                             (work / (tag + "-evaluate")).string()};
  evaluate.insert(evaluate.end(), episodes.begin(), episodes.end());
  run_step(evaluate, work / (tag + "-evaluate.log"));
  SeedRun run{binned_returns(out / "train_curve.csv", band.bin_updates),
              mean_departure_share(work / (tag + "-evaluate") / "results.csv"),
              varied_features(out / "policy.pt")};
  return run;
}

/// A scratch folder of this command's own, removed with everything in it on every exit.
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (fs::temp_directory_path() / "dynamix-band-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("dynamix band: could not create a scratch folder in " +
                               fs::temp_directory_path().string());
    path_ = pattern;
  }
  ScratchFolder(const ScratchFolder&) = delete;
  ScratchFolder& operator=(const ScratchFolder&) = delete;
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

int make_band(Band band, const fs::path& out) {
  band.scenario_fingerprint = scenario_fingerprint(train_arguments(band.train_options));
  require_replaceable(out);
  ScratchFolder work;
  std::vector<SeedRun> runs;
  for (const int seed : band.seeds) {
    std::cerr << "band: training seed " << seed << '\n';
    runs.push_back(run_seed(band, seed, work.path() / ("run" + std::to_string(seed)), work.path()));
    if (runs.back().bin_means.empty()) {
      throw InputError("--train-options", 0, "", "training long enough to finish episodes",
                       "none finished with seed " + std::to_string(seed));
    }
    std::cerr << "band: seed " << seed << ": rise " << format_rounded(runs.back().rise())
              << ", departure share " << format_rounded(runs.back().departure_share) << '\n';
  }
  fill_band(band, runs);
  if (band.min_departure_share <= 0) {
    throw InputError("--train-options", 0, "",
                     "training that teaches every seed's policy to depart from the neutral action",
                     "a seed whose policy never departs (train longer?)");
  }
  if (!band.min_rise)
    std::cerr << "band: a seed's curve did not rise; check guards learning by departures only\n";
  write_durably(out, band_yaml(band));
  std::cout << "wrote " << out.string() << ": " << band.bins.size() << " bins from seeds";
  for (const int seed : band.seeds) std::cout << ' ' << seed;
  std::cout << '\n';
  return 0;
}

int check_band(const std::string& path, std::optional<int> seed, const std::string& keep) {
  const Band band = read_band(path);
  const std::string now = scenario_fingerprint(train_arguments(band.train_options));
  if (band.scenario_fingerprint.empty()) {
    std::cerr << "dynamix: warning: " << path
              << " has no scenario_fingerprint, so the scenario is not checked (band make "
                 "records it)\n";
  } else if (now != band.scenario_fingerprint) {
    throw InputError(path, 0, "scenario_fingerprint",
                     "the scenario the band was made on (" + band.scenario_fingerprint + ")",
                     now + ": the scenario has changed since; make the band again");
  }
  const int chosen = seed.value_or(band.seeds.front());
  ScratchFolder work;
  const fs::path out = keep.empty() ? work.path() / "run" : fs::path(keep);
  const SeedRun run = run_seed(band, chosen, out, work.path());
  const bool passed = judge(band, run);
  std::cout << "band check (seed " << chosen << "): " << (passed ? "passed" : "failed") << "; rise "
            << format_rounded(run.rise()) << ", departure share "
            << format_rounded(run.departure_share) << '\n';
  return passed ? 0 : 1;
}

}  // namespace

int run_band(const std::vector<std::string>& args) {
  if (args.empty() || (args.front() != "make" && args.front() != "check")) {
    if (!args.empty() && (args.front() == "--help" || args.front() == "-h")) {
      std::cout << "dynamix band make|check: a reward band for CI (dynamix band make --help, "
                   "dynamix band check --help)\n";
      return 0;
    }
    throw InputError("command line", 0, "", "dynamix band make or dynamix band check",
                     args.empty() ? "nothing" : "'" + args.front() + "'");
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args.front() != "make") {
    BandCheckOptions o;
    if (parse_knob_command_line(rest, band_check_knobs(), o)) return 0;
    return check_band(o.band, o.seed, o.keep);
  }
  BandMakeOptions o;
  if (parse_knob_command_line(rest, band_make_knobs(), o)) return 0;
  require_in_range("--seeds", o.seeds, 1, kMaxSeeds);
  Band band;
  band.train_options = o.train_options;
  band.bin_updates = o.bin_updates;
  band.margin = o.margin;
  band.guard = o.guard;
  band.eval_seeds = o.eval_seeds;
  for (int i = 1; i <= o.seeds; ++i) band.seeds.push_back(i);
  return make_band(band, o.out);
}

}  // namespace dynamix
