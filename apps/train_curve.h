// train_curve.csv, one row per update, and the greedy evaluation a row may carry; a resumed
// run keeps the rows of the updates its checkpoint holds.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "policies/ppo/ppo_trainer.h"
#include "sim/io/csv_table.h"
#include "sim/scenario/scenario.h"
#include "studies/run_directory.h"

namespace dynamix {

/// What an update's evaluation of the greedy policy found.
struct CurveEvaluation {
  std::optional<double> time_to_target_s;
  double final_accuracy = 0;
  /// PolicySelection's score of this policy, when the run selects.
  std::optional<double> selection_score;
};

/// The greedy policy on the evaluation scenario over a few seeds: mean time to target (runs
/// that miss count with their total time) and mean final accuracy.
CurveEvaluation evaluate_greedy(const std::filesystem::path& policy_file,
                                const std::shared_ptr<const Scenario>& scenario,
                                const EnvOptions& env_options, int seeds);

/// train_curve.csv: one row per update, flushed as it comes; a resume keeps the rows of the
/// updates its checkpoint holds.
class TrainCurve {
 public:
  TrainCurve(const std::filesystem::path& file, const std::vector<std::string>& kept_rows);
  void add(const UpdateStats& stats, const std::optional<CurveEvaluation>& evaluation);
  void close() { csv_.close(); }

 private:
  CsvWriter csv_;
};

/// With --resume: InputError unless an interrupted run left its checkpoint in `directory`.
void require_checkpoint(const RunDirectory& directory);

/// The curve of a run: a new one, or with `resume` the interrupted run's, with `trainer` loaded
/// from its checkpoint.
TrainCurve start_curve(const RunDirectory& directory, PpoTrainer& trainer, bool resume);

}  // namespace dynamix
