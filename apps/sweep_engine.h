// The engine behind `dynamix sweep`: a plan of grid cells × policies × seeds checked before any
// episode runs, episodes on threads with a durable record each, and the outputs written from
// those records (results.csv, timing.csv, summary.md).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apps/cell_records.h"
#include "apps/interrupt.h"
#include "apps/progress.h"
#include "apps/run_directory.h"
#include "gym/batch_size_env.h"
#include "policies/policy.h"
#include "sim/scenario/scenario.h"

namespace dynamix {

/// Makes one episode's policy from its name in --policies and the episode's seed; InputError
/// on `option` for a name it does not know.
using PolicyMaker =
    std::function<std::unique_ptr<Policy>(const std::string& name, std::uint64_t seed,
                                          const EnvOptions& options, const std::string& option)>;

/// One --grid key and the values it takes, in the order given.
struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};

/// What defines a sweep: the same definition gives the same results.csv, and only a directory
/// of the same definition may be resumed.
struct SweepSpec {
  /// A scenario file, embedded path or built-in name.
  std::string scenario = kDefaultScenario;
  /// --set overrides applied to every cell before its grid values.
  std::vector<std::string> overrides;
  std::vector<GridAxis> grid;
  /// Policy names as given, each made per episode by the PolicyMaker.
  std::vector<std::string> policies;
  int seeds = 3;
  std::int64_t first_seed = 1000;
  int decision_interval = 10;
};

/// One point of the grid: a value per axis and the scenario they give.
struct GridCell {
  std::vector<std::string> values;
  /// "key=value key=value", for people.
  std::string label;
  std::shared_ptr<const Scenario> scenario;
};

/// Everything the episodes need. Episode i runs cell i / (P·S), policy (i / S) mod P and seed
/// first_seed + i mod S.
struct SweepPlan {
  SweepSpec spec;
  EnvOptions env_options;
  std::vector<GridCell> cells;
  /// Each policy's name() for the outputs ("static:128").
  std::vector<std::string> policy_labels;
  PolicyMaker make_policy;

  std::size_t seeds() const { return static_cast<std::size_t>(spec.seeds); }
  std::size_t episodes() const { return cells.size() * spec.policies.size() * seeds(); }
  std::size_t cell_of(std::size_t i) const { return i / (spec.policies.size() * seeds()); }
  std::size_t policy_of(std::size_t i) const { return i / seeds() % spec.policies.size(); }
  std::uint64_t seed_of(std::size_t i) const {
    return static_cast<std::uint64_t>(spec.first_seed) + i % seeds();
  }
  /// The results.csv header: cell, the grid keys, then the per-episode columns.
  std::vector<std::string> columns() const;
};

/// Parses the --grid texts and the comma-separated policies, loads every cell's scenario and
/// makes every policy once: a bad key, value or policy is an InputError before any episode.
SweepPlan make_sweep_plan(SweepSpec spec, const std::vector<std::string>& grid,
                          const std::string& policy_list, PolicyMaker make_policy);

/// run.json: the definition and every cell's resolved configuration (same sweep, same bytes).
std::string describe_sweep(const SweepPlan& plan);
/// InputError on --resume unless `file` holds `definition`; the folder is left as it is.
void check_same_sweep(const std::filesystem::path& file, const std::string& definition);

/// Where the threads of run_sweep_episodes take their episodes and leave their records. Every
/// member may be called from any thread.
class EpisodeFeed {
 public:
  virtual ~EpisodeFeed() = default;
  /// The next episode to run; none once all are handed out or after stop().
  virtual std::optional<std::size_t> next() = 0;
  /// Keeps the record of a finished episode (its results.csv row and wall time, as a CSV).
  virtual void keep(std::size_t index, const std::string& record) = 0;
  /// Hands out no more episodes.
  virtual void stop() = 0;
  /// How many episodes were kept so far, here and by other processes this feed serves.
  virtual std::size_t kept() const = 0;
  /// Whether episodes handed to other processes may still come back.
  virtual bool waiting() const { return false; }
};

/// The episodes `pending`, handed out in order, their records made durable in `records`.
class EpisodeQueue : public EpisodeFeed {
 public:
  EpisodeQueue(std::vector<std::size_t> pending, const CellRecords& records);
  std::optional<std::size_t> next() override;
  void keep(std::size_t index, const std::string& record) override;
  void stop() override { stopped_ = true; }
  std::size_t kept() const override { return kept_; }
  bool waiting() const override { return waiting_; }
  /// Set while other processes run episodes of this queue (the MPI ranks rank 0 serves).
  void set_waiting(bool waiting) { waiting_ = waiting; }
  std::size_t size() const { return pending_.size(); }

 private:
  const std::vector<std::size_t> pending_;
  const CellRecords& records_;
  std::atomic<std::size_t> next_{0};
  std::atomic<std::size_t> kept_{0};
  std::atomic<bool> stopped_{false};
  std::atomic<bool> waiting_{false};
};

/// Runs the episodes `feed` hands out on `jobs` threads, `expected` of them (for the progress),
/// each record given back to `feed`, until the feed has no more and waits for nothing. The
/// first failure (an interrupt included) stops the others and is rethrown once all have ended.
void run_sweep_episodes(const SweepPlan& plan, EpisodeFeed& feed, std::size_t expected, int jobs,
                        const InterruptScope& interrupt, Progress& progress);

/// results.csv, timing.csv and summary.md in `directory` from every episode's record; then the
/// records are removed.
void write_sweep_outputs(const SweepPlan& plan, const CellRecords& records,
                         const RunDirectory& directory);

}  // namespace dynamix
