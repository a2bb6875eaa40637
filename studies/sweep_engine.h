// The engine behind `dynamix sweep`: a plan of grid cells × policies × seeds checked before any
// episode runs, episodes on threads with a durable record each, and the outputs written from
// those records (results.csv, timing.csv, summary.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"
#include "policies/policy.h"
#include "sim/scenario/scenario.h"
#include "studies/cell_records.h"
#include "studies/episode_feed.h"
#include "studies/interrupt.h"
#include "studies/progress.h"
#include "studies/run_directory.h"

namespace dynamix {

class Diagnostics;

/// Makes one episode's policy from its name in --policies and the episode's seed; InputError
/// on `option` for a name it does not know.
using PolicyMaker =
    std::function<std::unique_ptr<Policy>(const std::string& name, std::uint64_t seed,
                                          const EnvOptions& options, const std::string& option)>;

/// One --grid key and the values it takes, in the order given.
struct GridAxis {
  std::string key;
  std::vector<std::string> values;
  /// From --grid-zip: takes its i-th value with the other zipped axes' i-th values, instead of
  /// each of them.
  bool zipped = false;
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
  EnvOptions env_options = env_preset("evaluation");
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

/// The most memory a sweep's cells may take before its first episode.
inline constexpr std::size_t kMaxPlanBytes = std::size_t{2} << 30;

/// Parses the --grid and --grid-zip texts and the comma-separated policies, loads every cell's
/// scenario and makes every policy once: a bad key, value or policy, zipped lists of unequal
/// length, or a grid too large for memory or kMaxEpisodes, is an InputError before any episode.
/// The zipped axes come after the --grid ones and count as one axis of the product. Implausible
/// values go to `diagnostics`, the run's (once each, however many cells repeat them).
SweepPlan make_sweep_plan(SweepSpec spec, const std::vector<std::string>& grid,
                          const std::string& policy_list, PolicyMaker make_policy,
                          const std::vector<std::string>& grid_zip, Diagnostics& diagnostics);

/// run.json: the definition and every cell's resolved configuration (same sweep, same bytes).
std::string describe_sweep(const SweepPlan& plan);
/// InputError on --resume unless `file` holds `definition`; the folder is left as it is.
void check_same_sweep(const std::filesystem::path& file, const std::string& definition);

/// A finished episode's record: its results.csv line and that line's fields, then the wall time.
struct EpisodeRecord {
  std::string line;
  std::vector<std::string> fields;
};

/// Episode `index`'s record, none when it has not finished. A record that is not this plan's
/// (another cell, grid value, policy or seed; a status, flag or number out of range) is an
/// InputError naming its file and line: --resume trusts nothing it did not check.
std::optional<EpisodeRecord> read_record(const SweepPlan& plan, const CellRecords& records,
                                         std::size_t index);

/// A sink that writes each record durably into `records`.
RecordSink write_to(const CellRecords& records);

/// Runs the episodes `feed` hands out on `jobs` threads, `expected` of them (for the progress),
/// each record given back to `feed`, until the feed has no more and waits for nothing. The
/// progress counts `recorded` episodes as done before these (a resumed sweep's). The first
/// failure (an interrupt included) stops the others and is rethrown once all have ended.
void run_sweep_episodes(const SweepPlan& plan, EpisodeFeed& feed, std::size_t expected, int jobs,
                        const InterruptScope& interrupt, Progress& progress,
                        std::size_t recorded = 0);

/// results.csv, timing.csv and summary.md in `directory` from every episode's record; then the
/// records are removed.
void write_sweep_outputs(const SweepPlan& plan, const CellRecords& records,
                         const RunDirectory& directory);

}  // namespace dynamix
