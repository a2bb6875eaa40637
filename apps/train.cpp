// `dynamix train`: PPO on a VectorEnv over one scenario or its randomized family, with a
// progress line, train_curve.csv, checkpoints that resume, and policy.pt.
#include "apps/train.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "apps/command_line.h"
#include "apps/knob_options.h"
#include "apps/policy_selection.h"
#include "apps/train_curve.h"
#include "apps/train_options.h"
#include "apps/train_ranks.h"
#include "apps/train_record.h"
#include "apps/train_shipping.h"
#include "gym/scenario_source.h"
#include "gym/vector_env.h"
#include "policies/ppo/ppo_trainer.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"
#include "sim/scenario/scenario_names.h"
#include "studies/interrupt.h"
#include "studies/progress.h"
#include "studies/ranks.h"
#include "studies/run_directory.h"

namespace dynamix {
namespace {

namespace po = boost::program_options;

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
    std::optional<CurveEvaluation> evaluation;
    if (stats.update % o.eval_every == 0) {
      trainer.export_policy(policy_file);
      evaluation = evaluate_greedy(policy_file, scenario, o.env, o.eval_seeds);
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
  const std::optional<Shipped> shipped =
      write_shipped_policy(trainer, directory, setup.selection.get());
  write_train_run_json(directory.file("run.json"), o, trainer.updates(), *setup.scenario, shipped,
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
    read_train_options(values, o);
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
