// run.json, the resume settings and the resume command of `dynamix train`.
#include "apps/train_record.h"

#include <algorithm>
#include <fstream>

#include "apps/knob_options.h"
#include "apps/portable_kernels.h"
#include "gym/env_knobs.h"
#include "policies/export/torch_kernels.h"
#include "sim/io/hash.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/scenario/scenario_names.h"
#include "studies/provenance.h"
#include "studies/version.h"

namespace dynamix {
namespace {

constexpr const char* kShellSafe =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@";

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

}  // namespace

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

/// run.json: each option once, keyed as Python names them: train's own rows at the top, every PPO
/// option (those train does not expose too) under "ppo", the environment's under "environment";
/// the build and the inputs (provenance), the CPU kernels its math ran on, the randomization
/// ranges with --randomize, and the resolved scenario.
void write_train_run_json(const std::filesystem::path& file, const TrainOptions& run,
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

}  // namespace dynamix
