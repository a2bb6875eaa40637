// `dynamix train`: PPO on a VectorEnv over one scenario or its randomized family, with a
// progress line, train_curve.csv, checkpoints that resume, and policy.pt.
#include "apps/train.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "apps/policy_selection.h"
#include "apps/portable_kernels.h"
#include "apps/train_options.h"
#include "gym/action_base.h"
#include "gym/env_knobs.h"
#include "gym/rules.h"
#include "gym/scenario_source.h"
#include "gym/vector_env.h"
#include "policies/baselines/baselines.h"
#include "policies/export/policy_snapshot.h"
#include "policies/export/torch_kernels.h"
#include "policies/export/torchscript_policy.h"
#include "policies/ppo/checkpoint.h"
#include "policies/ppo/ppo_policy.h"
#include "policies/ppo/ppo_trainer.h"
#include "sim/io/csv_table.h"
#include "sim/io/diagnostics.h"
#include "sim/io/hash.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/io/sources.h"
#include "sim/scenario/scenario_names.h"
#include "studies/evaluation.h"
#include "studies/interrupt.h"
#include "studies/progress.h"
#include "studies/provenance.h"
#include "studies/ranks.h"
#include "studies/run_directory.h"

namespace dynamix {
namespace {

namespace po = boost::program_options;

struct Evaluation {
  std::optional<double> time_to_target_s;
  double final_accuracy = 0;
  /// PolicySelection's score of this policy, when the run selects.
  std::optional<double> selection_score;
};

/// The first of the seeds training's evaluations run on: apart from the evaluation seeds of
/// `dynamix evaluate` (1000 on), so that a run's curve is not the evaluation it will face.
constexpr std::uint64_t kTrainingEvaluationSeed = 9000;

/// The greedy policy on the evaluation scenario over a few seeds: mean time to target (runs
/// that miss count with their total time) and mean final accuracy.
Evaluation evaluate_policy(const std::filesystem::path& policy_file,
                           const std::shared_ptr<const Scenario>& scenario,
                           const EnvOptions& env_options, int seeds) {
  EnvOptions options = env_options;
  options.stop_at_target = false;
  BatchSizeEnv env(std::make_shared<FixedScenario>(scenario), options);
  PpoPolicy policy(policy_file, env.schema(), options);
  Evaluation evaluation;
  double time_sum = 0;
  bool all_reached = true;
  for (int i = 0; i < seeds; ++i) {
    const EpisodeResult result =
        run_episode(env, policy, kTrainingEvaluationSeed + static_cast<std::uint64_t>(i));
    time_sum += result.time_to_target_s.value_or(result.total_time_s);
    all_reached = all_reached && result.time_to_target_s.has_value();
    evaluation.final_accuracy += result.final_accuracy / seeds;
  }
  if (all_reached) evaluation.time_to_target_s = time_sum / seeds;
  return evaluation;
}

const std::vector<std::string> kCurveColumns = {"update",
                                                "env_steps",
                                                "wall_s",
                                                "mean_return",
                                                "eval_time_to_target_s",
                                                "eval_final_accuracy",
                                                "mean_episode_time_s",
                                                "explained_variance",
                                                "entropy",
                                                "approx_kl",
                                                "clip_fraction",
                                                "selection_score"};

/// train writes the curve itself: a '#' line in it is damage, refused like any bad row, and a
/// row's width is checked after its update number.
constexpr CsvFormat kCurveFormat{.comments = false, .check_width = false};

/// The rows of train_curve.csv for the updates a resumed checkpoint holds. Row k is update k,
/// one per update from the first; those after `updates` were written after the checkpoint and
/// go, and fewer than `updates` is a refusal.
std::vector<std::string> kept_curve_rows(const std::filesystem::path& curve_path,
                                         std::int64_t updates) {
  const std::string path = curve_path.string();
  std::vector<std::string> kept;
  const bool exists = std::filesystem::exists(curve_path);
  std::int64_t rows = 0;
  const auto keep = [&](const CsvRow& row) {
    const std::string_view field = row.field(0);
    std::int64_t update = 0;
    const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), update);
    if (error != std::errc() || end != field.data() + field.size() || update != rows + 1) {
      throw InputError(path, row.line(), "update",
                       std::to_string(rows + 1) + " (row k is update k)", excerpt(field));
    }
    if (row.size() != kCurveColumns.size()) {
      throw InputError(path, row.line(), "", std::to_string(kCurveColumns.size()) + " fields",
                       excerpt(row.text()));
    }
    if (update <= updates) kept.emplace_back(row.text());
    ++rows;
  };
  if (exists) read_csv(path, nullptr, keep, kCurveFormat);
  if (rows < updates) {
    throw InputError(
        path, 0, "",
        "a row for each of the " + std::to_string(updates) + " updates the checkpoint holds",
        exists ? std::to_string(rows) + " rows" : "no file");
  }
  return kept;
}

constexpr const char* kShellSafe =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@";

/// The command that resumes this run: its own options (a resume must repeat them) and --resume.
std::string resume_command(const std::vector<std::string>& args) {
  std::string command = "dynamix train";
  for (const std::string& arg : args) {
    const bool plain = !arg.empty() && arg.find_first_not_of(kShellSafe) == std::string::npos;
    std::string quoted = "'";
    for (const char c : arg) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    command += " " + (plain ? arg : quoted + "'");
  }
  return args.end() == std::find(args.begin(), args.end(), "--resume") ? command + " --resume"
                                                                       : command;
}

void write_int_list(JsonWriter& json, const std::vector<int>& values) {
  json.begin_array();
  for (const int value : values) json.value(value);
  json.end_array();
}

void write_string_list(JsonWriter& json, const std::vector<std::string>& values) {
  json.begin_array();
  for (const std::string& value : values) json.value(value);
  json.end_array();
}

/// The ranges ScenarioSampler draws every training scenario from.
void write_randomization(JsonWriter& json, const SamplerOptions& sampler) {
  json.begin_object();
  json.key("workers");
  write_int_list(json, {sampler.min_workers, sampler.max_workers});
  json.key("gpu_types");
  write_string_list(json, sampler.gpu_types);
  json.key("bandwidth_gbps");
  json.begin_array();
  json.value(sampler.min_bandwidth_gbps);
  json.value(sampler.max_bandwidth_gbps);
  json.end_array();
  json.key("max_loss_rate");
  json.value(sampler.max_loss_rate);
  json.key("background_probability");
  json.value(sampler.background_probability);
  json.key("workloads");
  write_string_list(json, sampler.workloads);
  json.key("optimizers");
  write_string_list(json, sampler.optimizers);
  json.key("reference");  // each sample's target and time budget (SamplerOptions)
  json.begin_object();
  json.key("budget_factor");
  json.value(sampler.reference_budget_factor);
  json.key("batch");
  json.value(sampler.reference_batch);
  json.key("max_iterations");
  json.value(sampler.reference_max_iterations);
  json.key("share");
  json.value(sampler.reference_share);
  json.end_object();
  json.end_object();
}

/// The CPU kernels the run's math ran on, and whether they were the pinned ones.
void write_kernels(JsonWriter& json) {
  const TorchKernels kernels = torch_kernels();
  json.begin_object();
  json.key("pinned");
  json.value(kernels_pinned(process_environment()));
  json.key("blas_core");
  json.value(kernels.blas_core);
  json.key("aten_cpu_capability");
  json.value(kernels.aten_capability);
  json.key("torch_threads");
  json.value(kernels.threads);
  json.end_object();
}

/// What a selecting run shipped as policy.pt, and why (docs/ppo.md#do-no-harm).
struct Shipped {
  /// The baseline the fixed point decides as ("goodput:100"); nullopt where the action base has
  /// none.
  std::optional<std::string> fixed_point;
  /// The best snapshot's selection score and episodes.
  SelectionScore snapshot;
  /// The fixed point's, on the same scenarios and seeds.
  std::optional<SelectionScore> fixed_point_score;
  /// The best score any single rule reached there (PolicySelection::best_rule_score).
  double best_rule_score = 0;

  /// Episodes the best snapshot missed that the fixed point reached.
  int misses() const { return fixed_point_score ? misses_beside(snapshot, *fixed_point_score) : 0; }
  /// Whether the best snapshot beat every single rule on the selection scenarios.
  bool beats_every_rule() const { return snapshot.score < best_rule_score; }
  /// True when policy.pt is the fixed point: the best snapshot did not beat every single rule,
  /// or scored worse than the fixed point, or missed where the fixed point reached.
  bool fixed_point_ships() const {
    return fixed_point_score && (does_harm(snapshot, *fixed_point_score) || !beats_every_rule());
  }
  /// The selection episodes of what policy.pt is.
  const SelectionScore& shipped_score() const {
    return fixed_point_ships() ? *fixed_point_score : snapshot;
  }
};

/// run.json's "rules": every rule's selection score and missed episodes, best first.
void write_rule_standings(JsonWriter& json, const PolicySelection& selection) {
  std::vector<RuleStanding> rules = selection.rules();
  std::stable_sort(rules.begin(), rules.end(), [](const RuleStanding& a, const RuleStanding& b) {
    return a.score.score < b.score.score;
  });
  json.begin_array();
  for (const RuleStanding& rule : rules) {
    json.begin_object();
    json.key("rule");
    json.value(rule.rule);
    json.key("score");
    json.value(rule.score.score);
    json.key("missed_episodes");
    json.value(rule.misses);
    json.end_object();
  }
  json.end_array();
}

/// A selection scenario on which policy.pt missed the target.
struct SelectionMiss {
  std::string scenario;
  int missed = 0;
  int episodes = 0;
  std::optional<std::string> best_rule;
  double best_rule_time_s = 0;
};

/// The selection scenarios on which the episodes `score` holds missed the target.
std::vector<SelectionMiss> selection_misses(const SelectionScore& score,
                                            const PolicySelection& selection) {
  std::vector<SelectionMiss> misses;
  const auto seeds = static_cast<std::size_t>(selection.seeds());
  for (std::size_t s = 0; s < selection.scenarios(); ++s) {
    const SelectionScenario& scenario = selection.scenario_bests()[s];
    const auto first = score.reached.begin() + static_cast<std::ptrdiff_t>(s * seeds);
    const auto missed =
        static_cast<int>(std::count(first, first + static_cast<std::ptrdiff_t>(seeds), false));
    if (missed == 0) continue;
    misses.push_back({.scenario = scenario.name,
                      .missed = missed,
                      .episodes = static_cast<int>(seeds),
                      .best_rule = scenario.best_rule,
                      .best_rule_time_s = scenario.best_rule_time_s});
  }
  return misses;
}

/// The line train prints for a selection scenario `who` (policy.pt, or the fixed point) missed.
std::string miss_line(const std::string& who, const SelectionMiss& miss) {
  std::string line = "dynamix: " + who + " missed the target on " + miss.scenario + " in " +
                     std::to_string(miss.missed) + " of " + std::to_string(miss.episodes) +
                     " selection episodes; ";
  if (!miss.best_rule) return line + "no rule reached it on every seed there either";
  return line + "the best rule there, " + *miss.best_rule + ", reached it on every seed in " +
         format_rounded(miss.best_rule_time_s) + " s";
}

/// run.json's "selection": the scenarios, the best snapshot's score, the fixed point's, the best
/// single rule's, which one policy.pt is, every rule's standing, and where policy.pt missed.
void write_selection(JsonWriter& json, const TrainOptions& run, const Shipped& shipped,
                     const PolicySelection& selection) {
  json.begin_object();
  json.key("scenarios");
  write_string_list(json, run.select_on);
  json.key("score");
  json.value(shipped.snapshot.score);
  json.key("fixed_point");
  if (shipped.fixed_point) {
    json.value(*shipped.fixed_point);
  } else {
    json.null();
  }
  json.key("fixed_point_score");
  json.value(shipped.fixed_point_score ? std::optional(shipped.fixed_point_score->score)
                                       : std::nullopt);
  json.key("misses_beside_fixed_point");
  json.value(shipped.misses());
  json.key("best_rule_score");
  json.value(shipped.best_rule_score);
  json.key("shipped");
  json.value(shipped.fixed_point_ships() ? "fixed point" : "snapshot");
  json.key("rules");
  write_rule_standings(json, selection);
  json.key("misses");
  json.begin_array();
  for (const SelectionMiss& miss : selection_misses(shipped.shipped_score(), selection)) {
    json.begin_object();
    json.key("scenario");
    json.value(miss.scenario);
    json.key("missed_episodes");
    json.value(miss.missed);
    json.key("episodes");
    json.value(miss.episodes);
    json.key("best_rule");
    if (miss.best_rule) {
      json.value(*miss.best_rule);
    } else {
      json.null();
    }
    json.key("best_rule_time_s");
    json.value(miss.best_rule ? std::optional(miss.best_rule_time_s) : std::nullopt);
    json.end_object();
  }
  json.end_array();
  json.end_object();
}

/// The files a training run reads: its scenario, and those it trains and selects on.
std::vector<std::string> train_inputs(const TrainOptions& run) {
  std::vector<std::string> inputs = {run.scenario_path};
  for (const auto* list : {&run.train_on, &run.select_on}) {
    for (const std::string& path : *list) inputs.push_back(resolve_scenario(path));
  }
  return inputs;
}

/// Whether train records `knob` as its own: not a PPO or environment row (each recorded in its
/// own block and resumed by the trainer) and not one the run leaves unrecorded.
bool own_recorded_row(const Knob<TrainOptions>& knob) {
  return knob.recorded && !find_knob(ppo_knobs(), knob.key) && !find_knob(env_knobs(), knob.key);
}

/// run.json: each option once, keyed as Python names them: train's own rows at the top, every PPO
/// option (those train does not expose too) under "ppo", the environment's under "environment";
/// the build and the inputs (provenance), the CPU kernels its math ran on, the randomization
/// ranges with --randomize, and the resolved scenario.
void write_run_json(const std::filesystem::path& file, const TrainOptions& run,
                    std::int64_t updates, const Scenario& scenario,
                    const std::optional<Shipped>& shipped, const PolicySelection* selection) {
  std::ofstream out(file);
  JsonWriter json(out);
  json.begin_object();
  json.key("dynamix_version");
  json.value(kDynamixVersion);
  json.key("command");
  json.value("train");
  json.key("provenance");
  write_provenance(json, train_inputs(run));
  for (const Knob<TrainOptions>& knob : train_knobs().knobs) {
    if (!own_recorded_row(knob)) continue;
    json.key(snake_case(knob.key));
    if (knob.write) {
      knob.write(json, run);
    } else {
      json.value(knob.show(run));
    }
  }
  json.key("updates");
  json.value(updates);
  json.key("kernels");
  write_kernels(json);
  json.key("ppo");
  json.begin_object();
  write_knob_values(json, ppo_knobs(), run.ppo);
  json.end_object();
  json.key("environment");
  json.begin_object();
  write_knob_values(json, env_knobs(), run.env);
  json.end_object();
  if (run.randomize) {
    json.key("randomization");
    write_randomization(json, run.sampler);
  }
  if (shipped) {
    json.key("selection");
    write_selection(json, run, *shipped, *selection);
  }
  json.key("config");
  json.value(scenario.resolved);
  json.end_object();
  if (!out) throw InputError(file.string(), 0, "", "a writable file", "a write error");
}

/// `names` with each named set (scenario_set: "dynamic", "budget", ...) replaced by its paths and
/// each shipped scenario's short name by its embedded path.
std::vector<std::string> expand_scenario_sets(const std::vector<std::string>& names,
                                              const std::string& option) {
  std::vector<std::string> paths;
  for (const std::string& name : names) {
    if (const std::optional<std::vector<std::string>> set = scenario_set(name)) {
      paths.insert(paths.end(), set->begin(), set->end());
    } else {
      paths.push_back(resolve_scenario(name, option));
    }
  }
  return paths;
}

/// Reads the options through train's table (InputError naming the first out of range); resolves
/// the scenario, the action set and the randomized family.
void check(const po::variables_map& values, TrainOptions& o) {
  read_knob_options(values, train_knobs(), o);
  o.scenario_path = resolve_scenario(o.scenario_path);
  if (o.env.actions.empty()) o.env.actions = default_actions(o.env.action_base);
  if (const std::optional<int> bad = invalid_action(o.env.action_base, o.env.actions)) {
    throw InputError("--actions", 0, "", action_rule(o.env.action_base), std::to_string(*bad));
  }
  // The shaping discounts as the learner does, so that it teaches time to target (docs/ppo.md).
  o.env.reward.shaping_discount = o.ppo.gamma;
  o.env.reward.shaping_discount_by_time = o.ppo.discount_by_time;
  if (o.randomize) o.sampler = training_family(o.scenario_path, o.overrides, o.family_budget);
  o.select_on = expand_scenario_sets(o.select_on, "--select-on");
  if (o.randomize && !o.train_on.empty()) {
    throw InputError("--train-on", 0, "", "either --train-on or --randomize", "both");
  }
  o.train_on = expand_scenario_sets(o.train_on, "--train-on");
}

/// What a resume must repeat beside the PPO and environment options (the trainer's own): the
/// scenario by name and resolved configuration, and every other row of train's table that a run
/// records, shown as the table shows them.
RunSettings run_settings(const TrainOptions& o, const Scenario& scenario) {
  RunSettings settings = {
      {"scenario", scenario.name},
      {"set", "resolved configuration " + hex_fingerprint(scenario.resolved.to_yaml())}};
  for (const Knob<TrainOptions>& knob : train_knobs().knobs) {
    if (own_recorded_row(knob) && knob.key != "scenario" && knob.key != "set") {
      settings.emplace_back(knob.key, knob.show(o));
    }
  }
  return settings;
}

/// train_curve.csv: one row per update, flushed as it comes; a resume keeps the rows of the
/// updates its checkpoint holds.
class TrainCurve {
 public:
  TrainCurve(const std::filesystem::path& file, const std::vector<std::string>& kept_rows)
      : csv_(file, kCurveColumns) {
    for (const std::string& row : kept_rows) csv_.row_text(row);
  }

  void add(const UpdateStats& stats, const std::optional<Evaluation>& evaluation) {
    const auto known = [](double value) {
      return std::isnan(value) ? std::nullopt : std::optional(value);
    };
    csv_ << stats.update << stats.env_steps << stats.wall_s << known(stats.mean_return)
         << (evaluation ? evaluation->time_to_target_s : std::nullopt)
         << (evaluation ? std::optional(evaluation->final_accuracy) : std::nullopt)
         << known(stats.mean_episode_time_s) << known(stats.explained_variance)
         << stats.losses.entropy << stats.losses.approx_kl << stats.losses.clip_fraction
         << (evaluation ? evaluation->selection_score : std::nullopt);
    csv_.end_row();
    csv_.flush();
  }

  void close() { csv_.close(); }

 private:
  CsvWriter csv_;
};

/// Loads the checkpoint of the interrupted run with --resume, and opens the curve.
/// InputError unless an interrupted run left its checkpoint in `directory`.
void require_checkpoint(const RunDirectory& directory) {
  const std::filesystem::path checkpoint = directory.file("checkpoint.pt");
  if (!std::filesystem::exists(checkpoint)) {
    throw InputError("--resume", 0, "", "a checkpoint of an interrupted run",
                     checkpoint.string() + " missing");
  }
}

TrainCurve start_curve(const RunDirectory& directory, PpoTrainer& trainer, bool resume) {
  const std::filesystem::path checkpoint = directory.file("checkpoint.pt");
  const std::filesystem::path curve = directory.file("train_curve.csv");
  if (!resume) return TrainCurve(curve, {});
  require_checkpoint(directory);
  trainer.load_checkpoint(checkpoint);
  return TrainCurve(curve, kept_curve_rows(curve, trainer.updates()));
}

/// The progress line after an update.
std::string progress_status(const UpdateStats& stats, double last_return,
                            const std::string& last_eval) {
  const auto steps_per_s =
      static_cast<std::int64_t>(stats.env_steps / std::max(stats.wall_s, 1e-9));
  return "update " + std::to_string(stats.update) + " | " + std::to_string(steps_per_s) +
         " env steps/s | return " +
         (std::isnan(last_return) ? std::string("-") : format_rounded(last_return)) +
         " | eval time-to-target " + last_eval;
}

/// Where a selecting run keeps its best policy until it ends.
constexpr const char* kSelectedPolicy = "selected_policy.pt";

/// The selection on --select-on's scenarios (their heuristics run once here), none without.
std::unique_ptr<PolicySelection> make_selection(const TrainOptions& o, Diagnostics& diagnostics,
                                                const InterruptScope& interrupt) {
  if (o.select_on.empty()) return nullptr;
  std::vector<std::shared_ptr<const Scenario>> scenarios;
  for (const std::string& path : o.select_on) {
    scenarios.push_back(
        std::make_shared<const Scenario>(load_scenario(resolve_scenario(path), {}, diagnostics)));
  }
  return std::make_unique<PolicySelection>(
      std::move(scenarios), o.env, o.eval_seeds, static_cast<std::size_t>(o.threads),
      [&interrupt](const TrainingRun&, const IterationRecord&) { interrupt.check(); });
}

/// A selecting run's best snapshot, whether it ships or not.
constexpr const char* kBestSnapshot = "best_snapshot.pt";
/// Where the fixed point is written to be scored.
constexpr const char* kFixedPoint = "fixed_point.pt";

/// Scores the fixed point (the final snapshot's network with its output layer set to always take
/// the neutral action, in kFixedPoint) as the snapshots were scored, and judges the best
/// snapshot against it; no fixed point where the action base has none.
Shipped judge(const PpoTrainer& trainer, const RunDirectory& directory,
              const PolicySelection& selection) {
  const PolicySnapshot snapshot = trainer.policy_snapshot();
  const PolicyMetadata& metadata = snapshot.metadata;
  Shipped shipped;
  shipped.fixed_point = fixed_point_policy(metadata.action_base, metadata.actions);
  shipped.snapshot = *selection.best_score();
  shipped.best_rule_score = selection.best_rule_score();
  if (!shipped.fixed_point) return shipped;
  const std::size_t neutral = *neutral_action(metadata.action_base, metadata.actions);
  save_torchscript_policy(constant_action_snapshot(snapshot, neutral), directory.file(kFixedPoint));
  shipped.fixed_point_score = selection.score(directory.file(kFixedPoint));
  return shipped;
}

/// Writes policy.pt: the final policy; or with a selection the best snapshot it scored (the
/// final one included, in last_policy.pt; the best in best_snapshot.pt), unless the fixed point
/// did better there, which then ships instead. What shipped, with a selection.
std::optional<Shipped> write_policy(PpoTrainer& trainer, const RunDirectory& directory,
                                    PolicySelection* selection) {
  const std::filesystem::path policy = directory.file("policy.pt");
  if (!selection) {
    trainer.export_policy(policy);
    return std::nullopt;
  }
  const std::filesystem::path last = directory.file("last_policy.pt");
  trainer.export_policy(last);
  selection->consider(last, directory.file(kSelectedPolicy));
  const Shipped shipped = judge(trainer, directory, *selection);
  // Copies first, so that the kept snapshot survives until the run's files are complete.
  const auto overwrite = std::filesystem::copy_options::overwrite_existing;
  std::filesystem::copy_file(directory.file(kSelectedPolicy), directory.file(kBestSnapshot),
                             overwrite);
  if (shipped.fixed_point_ships()) {
    std::filesystem::rename(directory.file(kFixedPoint), policy);
  } else {
    std::filesystem::copy_file(directory.file(kSelectedPolicy), policy, overwrite);
    std::filesystem::remove(directory.file(kFixedPoint));
  }
  std::filesystem::remove(directory.file(kSelectedPolicy));
  return shipped;
}

/// The line that says what policy.pt is, for a selecting run.
std::string shipped_line(const Shipped& shipped, ActionBase base, std::size_t scenarios) {
  if (!shipped.fixed_point) {
    return "policy.pt: the best snapshot; the " + std::string(action_base_name(base)) +
           " action base has no fixed point to check it against";
  }
  const std::string fixed_point = format_rounded(shipped.fixed_point_score->score);
  const std::string snapshot = format_rounded(shipped.snapshot.score);
  const std::string best_rule = format_rounded(shipped.best_rule_score);
  const std::string on = " on " + std::to_string(scenarios) + " scenario(s)";
  if (!shipped.fixed_point_ships()) {
    return "policy.pt: the best snapshot (selection " + snapshot + " against the fixed point " +
           *shipped.fixed_point + "'s " + fixed_point + " and the best single rule's " + best_rule +
           on + ")";
  }
  std::string why;
  if (shipped.misses() > 0) {
    why = "; it missed the target in " + std::to_string(shipped.misses()) +
          " episode(s) the fixed point reached";
  } else if (!shipped.beats_every_rule() &&
             shipped.snapshot.score <= shipped.fixed_point_score->score) {
    why = "; it did not beat the best single rule's " + best_rule;
  }
  return "policy.pt: the fixed point " + *shipped.fixed_point + " (selection " + fixed_point +
         " against the best snapshot's " + snapshot + on + why + "); the best snapshot is in " +
         kBestSnapshot;
}

/// What train's environments draw their episodes from: the scenario, or its randomized family.
std::shared_ptr<const ScenarioSource> episode_source(const TrainOptions& o,
                                                     std::shared_ptr<const Scenario> scenario,
                                                     Diagnostics& diagnostics) {
  if (o.randomize) return std::make_shared<ScenarioSampler>(o.sampler, diagnostics);
  if (!o.train_on.empty()) {
    std::vector<std::shared_ptr<const Scenario>> scenarios;
    for (const std::string& path : o.train_on) {
      scenarios.push_back(std::make_shared<const Scenario>(load_scenario(path, {}, diagnostics)));
    }
    return std::make_shared<ScenarioList>(std::move(scenarios));
  }
  return std::make_shared<FixedScenario>(std::move(scenario));
}

/// Under the rule base with a selection: moves the best rule that reached the target in every
/// selection episode to the front of the action set, where it is the neutral action (the anchor
/// and fixed point). What was chosen, for the output; nothing under the other bases.
std::optional<std::string> anchor_on_best_rule(EnvOptions& env, const PolicySelection* selection) {
  if (env.action_base != ActionBase::kRule || selection == nullptr) return std::nullopt;
  std::vector<std::string_view> candidates;
  for (int action : env.actions) {
    candidates.push_back(kSelectableRules[static_cast<std::size_t>(action)]);
  }
  const std::optional<std::string> best = selection->best_reaching_rule(candidates);
  if (!best) {
    return "anchor: " + std::string(candidates.front()) +
           " (no rule of the action set reached the target in every selection episode)";
  }
  const auto first = std::find(env.actions.begin(), env.actions.end(), *selectable_rule(*best));
  std::rotate(env.actions.begin(), first, first + 1);
  const auto standing = std::find_if(selection->rules().begin(), selection->rules().end(),
                                     [&](const RuleStanding& rule) { return rule.rule == *best; });
  return "anchor: " + *best + ", the best rule that reached the target in every selection " +
         "episode (selection " + format_rounded(standing->score.score) + ")";
}

/// The action set as text, to share with the other ranks.
std::string actions_text(const std::vector<int>& actions) {
  std::string text;
  for (int action : actions) text += std::to_string(action) + ",";
  return text;
}

std::vector<int> actions_of(const std::string& text) {
  std::vector<int> actions;
  for (std::size_t start = 0, end; (end = text.find(',', start)) != std::string::npos;
       start = end + 1) {
    actions.push_back(std::stoi(text.substr(start, end - start)));
  }
  return actions;
}

/// Whether every rank trains on: rank 0's word (`lead_goes_on` there), on every rank.
bool go_on(Ranks* ranks, bool lead_goes_on) {
  if (ranks == nullptr) return lead_goes_on;
  return ranks->share({lead_goes_on ? "1" : "0"}).front() == "1";
}

/// A VectorEnv spread over the ranks of `mpirun -n R dynamix train`.
class RankExchange : public EnvExchange {
 public:
  explicit RankExchange(Ranks& ranks) : ranks_(ranks) {}
  std::size_t rank() const override { return ranks_.rank(); }
  std::size_t ranks() const override { return ranks_.size(); }
  std::vector<std::string> all_gather(const std::string& mine) override {
    return ranks_.all_gather(mine);
  }

 private:
  Ranks& ranks_;
};

/// Trains to the end or an interrupt; after each update: evaluation when due, a curve row,
/// the checkpoint when due (and on the interrupt), the progress line. True if interrupted.
bool train_loop(PpoTrainer& trainer, TrainCurve& curve, const RunDirectory& directory,
                const TrainOptions& o, const std::shared_ptr<const Scenario>& scenario,
                PolicySelection* selection, Ranks* ranks) {
  const InterruptScope interrupt;
  const std::filesystem::path policy_file = directory.file("policy.pt");
  double last_return = std::nan("");
  std::string last_eval = "-";
  Progress progress(std::cerr, {.style = stderr_progress_style(o.quiet)});
  auto after_update = [&](const UpdateStats& stats) {
    if (!std::isnan(stats.mean_return)) last_return = stats.mean_return;
    std::optional<Evaluation> evaluation;
    if (stats.update % o.eval_every == 0) {
      trainer.export_policy(policy_file);
      evaluation = evaluate_policy(policy_file, scenario, o.env, o.eval_seeds);
      last_eval = evaluation->time_to_target_s
                      ? format_rounded(*evaluation->time_to_target_s) + " s"
                      : "not reached";
      if (selection) {
        selection->consider(policy_file, directory.file(kSelectedPolicy));
        evaluation->selection_score = selection->last();
        last_eval += " | selection " + format_rounded(*selection->last()) + " (best " +
                     format_rounded(*selection->best()) + ")";
      }
    }
    curve.add(stats, evaluation);
    if (stats.update % o.checkpoint_every == 0 || interrupt.requested()) {
      trainer.save_checkpoint(directory.file("checkpoint.pt"));
    }
    progress.update(static_cast<double>(stats.env_steps) / static_cast<double>(o.steps),
                    progress_status(stats, last_return, last_eval));
  };
  trainer.train(o.steps, [&](const UpdateStats& stats) {
    try {
      after_update(stats);
    } catch (...) {
      // The other ranks stop with this one instead of waiting for its word.
      if (ranks) go_on(ranks, false);
      throw;
    }
    return go_on(ranks, !interrupt.requested());
  });
  progress.finish();
  return interrupt.requested();
}

/// What rank 0 (or the only process) loads and opens before training: each may refuse the input.
struct LeadSetup {
  /// `interrupt` stops the selection's rule episodes (Interrupted: nothing is written yet).
  LeadSetup(const TrainOptions& o, const InterruptScope& interrupt)
      : diagnostics({.strict = o.strict, .out = &std::cerr}),
        scenario(std::make_shared<const Scenario>(
            load_scenario(o.scenario_path, o.overrides, diagnostics))),
        source(episode_source(o, scenario, diagnostics)),
        selection(make_selection(o, diagnostics, interrupt)) {
    directory.emplace(o.out, "train", o.resume ? RunDirectory::kResume : RunDirectory::kResumable);
    if (o.resume) require_checkpoint(*directory);
  }

  Diagnostics diagnostics;
  std::shared_ptr<const Scenario> scenario;
  std::shared_ptr<const ScenarioSource> source;
  std::unique_ptr<PolicySelection> selection;
  std::optional<RunDirectory> directory;
};

/// After the last update: the checkpoint, policy.pt (the selection's verdict), run.json, the
/// committed run directory, and what was written.
void finish(PpoTrainer& trainer, LeadSetup& setup, const TrainOptions& o) {
  RunDirectory& directory = *setup.directory;
  const PolicySelection* selection = setup.selection.get();
  trainer.save_checkpoint(directory.file("checkpoint.pt"));
  const std::optional<Shipped> shipped = write_policy(trainer, directory, setup.selection.get());
  write_run_json(directory.file("run.json"), o, trainer.updates(), *setup.scenario, shipped,
                 selection);
  directory.commit();
  std::cout << "trained " << trainer.updates() << " updates (" << trainer.env_steps()
            << " decisions) on " << setup.scenario->name << (o.randomize ? " (randomized)" : "")
            << '\n'
            << "wrote " << directory.final_path().string() << "/{policy.pt,"
            << (selection ? "last_policy.pt,best_snapshot.pt," : "")
            << "checkpoint.pt,train_curve.csv,run.json}\n";
  if (shipped) {
    std::cout << "selected the policy that scored " << format_rounded(shipped->snapshot.score)
              << " against the per-scenario best rule on " << selection->scenarios()
              << " scenario(s)\n"
              << shipped_line(*shipped, o.env.action_base, selection->scenarios()) << '\n';
    for (const SelectionMiss& miss : selection_misses(shipped->shipped_score(), *selection)) {
      std::cout << miss_line("policy.pt", miss) << '\n';
    }
    if (shipped->fixed_point_score && !shipped->fixed_point_ships()) {
      for (const SelectionMiss& miss : selection_misses(*shipped->fixed_point_score, *selection)) {
        std::cout << miss_line("its fixed point " + *shipped->fixed_point, miss) << '\n';
      }
    }
  }
}

/// As one of the ranks of `mpirun -n R dynamix train`, R > 1: every rank steps its block of the
/// environments and learns alike from all of them; rank 0 owns --out, evaluates, selects and
/// decides when to stop. The same policy.pt as one process.
int follow_training(const TrainOptions& o, Ranks& ranks) {
  Diagnostics quiet;
  const auto scenario =
      std::make_shared<const Scenario>(load_scenario(o.scenario_path, o.overrides, quiet));
  RankExchange exchange(ranks);
  VectorEnv envs(episode_source(o, scenario, quiet), o.env,
                 static_cast<std::size_t>(o.environments), static_cast<std::size_t>(o.threads),
                 &exchange);
  PpoTrainer trainer(envs, o.ppo, run_settings(o, *scenario));
  const std::string checkpoint = ranks.share({}).front();
  if (!checkpoint.empty()) trainer.load_checkpoint(checkpoint);
  trainer.train(o.steps, [&](const UpdateStats&) { return go_on(&ranks, true); });
  return 0;
}

/// A rank other than 0: checks the options as rank 0 does, agrees with it on the run, and follows
/// it; 2 when either refused the input (rank 0 says why).
int join_training(const po::variables_map& values, TrainOptions& o, Ranks& ranks,
                  const std::string& definition) {
  try {
    check(values, o);
  } catch (const std::exception&) {
    ranks.agree(nullptr, "training run");
    return 2;
  }
  if (!ranks.agree(&definition, "training run")) return 2;
  o.env.actions = actions_of(ranks.share({}).front());
  return follow_training(o, ranks);
}

}  // namespace

int run_train(const std::vector<std::string>& args) {
  TrainOptions o;
  const po::options_description options = describe_knob_options(train_knobs());
  po::variables_map values;
  if (parse_command_line(args, options, values)) return 0;
  std::optional<Ranks> ranks;
  if (mpi_world_size() > 1) ranks.emplace("train");
  const std::string definition = join(args);
  if (ranks && !ranks->lead()) return join_training(values, o, *ranks, definition);
  // Everything that can refuse the input, before the other ranks start: they wait for rank 0.
  std::optional<LeadSetup> setup;
  try {
    check(values, o);
    // SIGINT or SIGTERM while the selection runs its rules stops here, before anything is written.
    const InterruptScope starting;
    setup.emplace(o, starting);
  } catch (const InputError& error) {
    if (!ranks) throw;
    // Said before the other ranks learn of it (mpirun ends the job as one exits with an error).
    const int status = say_input_error(error);
    ranks->agree(nullptr, "training run");
    return status;
  } catch (...) {
    if (ranks) ranks->agree(nullptr, "training run");
    throw;
  }
  if (ranks && !ranks->agree(&definition, "training run")) return 2;
  if (const std::optional<std::string> anchor = anchor_on_best_rule(o.env, setup->selection.get());
      anchor && !o.quiet) {
    std::cerr << *anchor << '\n';
  }
  if (ranks) ranks->share({actions_text(o.env.actions)});
  const std::shared_ptr<const Scenario>& scenario = setup->scenario;
  const std::unique_ptr<PolicySelection>& selection = setup->selection;
  std::optional<RunDirectory>& directory = setup->directory;
  std::optional<RankExchange> exchange;
  if (ranks) exchange.emplace(*ranks);
  VectorEnv envs(setup->source, o.env, static_cast<std::size_t>(o.environments),
                 static_cast<std::size_t>(o.threads), exchange ? &*exchange : nullptr);
  PpoTrainer trainer(envs, o.ppo, run_settings(o, *scenario));
  // The other ranks load the checkpoint too, and replay its episodes with this rank.
  if (ranks) ranks->share({o.resume ? directory->file("checkpoint.pt").string() : ""});
  TrainCurve curve = start_curve(*directory, trainer, o.resume);
  // A resumed run scores the policy it had kept again.
  if (selection && o.resume && std::filesystem::exists(directory->file(kSelectedPolicy))) {
    selection->consider(directory->file(kSelectedPolicy), directory->file(kSelectedPolicy));
  }
  if (train_loop(trainer, curve, *directory, o, scenario, selection.get(),
                 ranks ? &*ranks : nullptr)) {
    std::cerr << "dynamix: interrupted; resume with: " << resume_command(args) << '\n';
    return 130;
  }
  curve.close();
  finish(trainer, *setup, o);
  return 0;
}

}  // namespace dynamix
