// train_curve.csv and the greedy evaluation of `dynamix train`.
#include "apps/train_curve.h"

#include <charconv>
#include <cmath>

#include "gym/scenario_source.h"
#include "policies/ppo/ppo_policy.h"
#include "sim/io/input_error.h"
#include "studies/evaluation.h"

namespace dynamix {
namespace {

/// The first of the seeds training's evaluations run on: apart from the evaluation seeds of
/// `dynamix evaluate` (1000 on), so that a run's curve is not the evaluation it will face.
constexpr std::uint64_t kTrainingEvaluationSeed = 9000;

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

}  // namespace

/// The greedy policy on the evaluation scenario over a few seeds: mean time to target (runs
/// that miss count with their total time) and mean final accuracy.
CurveEvaluation evaluate_greedy(const std::filesystem::path& policy_file,
                                const std::shared_ptr<const Scenario>& scenario,
                                const EnvOptions& env_options, int seeds) {
  EnvOptions options = env_options;
  options.stop_at_target = false;
  BatchSizeEnv env(std::make_shared<FixedScenario>(scenario), options);
  PpoPolicy policy(policy_file, env.schema(), options);
  CurveEvaluation evaluation;
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

TrainCurve::TrainCurve(const std::filesystem::path& file, const std::vector<std::string>& kept_rows)
    : csv_(file, kCurveColumns) {
  for (const std::string& row : kept_rows) csv_.row_text(row);
}

void TrainCurve::add(const UpdateStats& stats, const std::optional<CurveEvaluation>& evaluation) {
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

}  // namespace dynamix
