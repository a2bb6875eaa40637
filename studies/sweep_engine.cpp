// The sweep engine: grid cells loaded and checked up front, episodes on threads with a durable
// record each, outputs assembled from the records in episode order.
#include "studies/sweep_engine.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>

#include "gym/batch_size_env.h"
#include "gym/scenario_source.h"
#include "sim/cluster/compute.h"
#include "sim/core/check.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/io/sources.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_names.h"
#include "studies/cell_records.h"
#include "studies/evaluation.h"
#include "studies/interrupt.h"
#include "studies/progress.h"
#include "studies/run_directory.h"
#include "studies/version.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;

/// The results.csv columns after the cell index and the grid values.
const std::vector<std::string> kResultColumns = {"policy",
                                                 "seed",
                                                 "status",
                                                 "reached",
                                                 "time_to_target_s",
                                                 "final_accuracy",
                                                 "total_time_s",
                                                 "iterations",
                                                 "mean_iteration_s",
                                                 "comm_share",
                                                 "wait_share",
                                                 "mean_batch_size",
                                                 "decisions",
                                                 "retransmits",
                                                 "timeouts",
                                                 "events",
                                                 "reason"};
}  // namespace

std::vector<std::string> SweepPlan::columns() const {
  std::vector<std::string> columns = {"cell"};
  for (const GridAxis& axis : spec.grid) columns.push_back(axis.key);
  columns.insert(columns.end(), kResultColumns.begin(), kResultColumns.end());
  return columns;
}

namespace {

std::vector<std::string> split_fields(const std::string& text, char separator) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find(separator, start)) != std::string::npos; start = end + 1)
    fields.push_back(text.substr(start, end - start));
  fields.push_back(text.substr(start));
  return fields;
}

GridAxis parse_axis(const std::string& text, const std::vector<GridAxis>& earlier,
                    const std::string& option = "--grid") {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw InputError(option, 0, "", "KEY=V1,V2,... with a dotted scenario key", excerpt(text));
  }
  GridAxis axis{text.substr(0, equals), split_fields(text.substr(equals + 1), ','),
                option == "--grid-zip"};
  const std::set<std::string> distinct(axis.values.begin(), axis.values.end());
  if (distinct.count("") > 0 || distinct.size() != axis.values.size()) {
    throw InputError(option, 0, axis.key, "distinct, non-empty values separated by commas",
                     excerpt(text.substr(equals + 1)));
  }
  const bool reserved =
      axis.key == "cell" ||
      std::find(kResultColumns.begin(), kResultColumns.end(), axis.key) != kResultColumns.end();
  const bool repeated = std::any_of(earlier.begin(), earlier.end(),
                                    [&](const GridAxis& other) { return other.key == axis.key; });
  if (reserved || repeated) {
    throw InputError(option, 0, axis.key,
                     repeated ? "each key once" : "a key that is not a results.csv column",
                     "'" + axis.key + "'");
  }
  return axis;
}

std::vector<GridAxis> parse_grid(const std::vector<std::string>& texts,
                                 const std::vector<std::string>& zipped) {
  if (texts.empty() && zipped.empty()) {
    throw InputError("--grid", 0, "", "at least one KEY=V1,V2,... (a scenario key and its values)",
                     "none");
  }
  std::vector<GridAxis> axes;
  axes.reserve(texts.size() + zipped.size());
  for (const std::string& text : texts) axes.push_back(parse_axis(text, axes));
  for (const std::string& text : zipped) {
    axes.push_back(parse_axis(text, axes, "--grid-zip"));
    const GridAxis& first = axes[texts.size()];
    if (axes.back().values.size() == first.values.size()) continue;
    throw InputError(
        "--grid-zip", 0, axes.back().key,
        "as many values as " + first.key + " (" + std::to_string(first.values.size()) + ")",
        std::to_string(axes.back().values.size()));
  }
  return axes;
}

/// The axes that vary independently, as indices into the grid: each --grid axis alone, then the
/// zipped axes together.
std::vector<std::vector<std::size_t>> grid_dimensions(const std::vector<GridAxis>& grid) {
  std::vector<std::vector<std::size_t>> dimensions;
  std::vector<std::size_t> zipped;
  for (std::size_t a = 0; a < grid.size(); ++a) {
    if (grid[a].zipped) {
      zipped.push_back(a);
    } else {
      dimensions.push_back({a});
    }
  }
  if (!zipped.empty()) dimensions.push_back(zipped);
  return dimensions;
}

/// The scenario with the base --set overrides and `assignments`; a load error blames --grid.
std::shared_ptr<const Scenario> load_with(const SweepSpec& spec,
                                          const std::vector<std::string>& assignments,
                                          Diagnostics& diagnostics) {
  std::vector<std::string> overrides = spec.overrides;
  overrides.insert(overrides.end(), assignments.begin(), assignments.end());
  try {
    return std::make_shared<const Scenario>(load_scenario(spec.scenario, overrides, diagnostics));
  } catch (const InputError& error) {
    std::string cell;
    for (const std::string& assignment : assignments)
      cell += (cell.empty() ? "" : " ") + assignment;
    throw InputError("--grid", 0, cell, "values the scenario " + spec.scenario + " accepts",
                     "the error \"" + std::string(error.what()) + "\"");
  }
}

/// The grid's cells, saturating instead of overflowing.
std::size_t cell_count(const std::vector<GridAxis>& grid) {
  std::size_t cells = 1;
  for (const std::vector<std::size_t>& dimension : grid_dimensions(grid)) {
    const std::size_t size = grid[dimension.front()].values.size();
    cells = cells > std::numeric_limits<std::size_t>::max() / size
                ? std::numeric_limits<std::size_t>::max()
                : cells * size;
  }
  return cells;
}

/// A cell's memory (its Scenario and resolved configuration) as measured on quickstart (50 KB)
/// and a 32-node leaf-spine (95 KB).
std::size_t cell_bytes(const Scenario& base) {
  return (40 << 10) + 512 * (base.topology.hosts().size() + base.topology.links().size());
}

/// Refuses, before any cell is loaded, a grid whose cells or episodes would not fit in memory.
void require_grid_fits(const SweepSpec& spec, const Scenario& base) {
  const std::size_t cells = cell_count(spec.grid);
  require_episodes_fit("--grid",
                       {cells, spec.policies.size(), static_cast<std::size_t>(spec.seeds)},
                       std::to_string(cells) + " cells × " + std::to_string(spec.policies.size()) +
                           " policies × " + std::to_string(spec.seeds) + " seeds");
  const std::size_t each = cell_bytes(base);
  if (cells <= kMaxPlanBytes / each) return;
  throw InputError("--grid", 0, "",
                   "a grid of at most " + std::to_string(kMaxPlanBytes / each) +
                       " cells (every cell's scenario is loaded before the first episode, about " +
                       std::to_string(each >> 10) + " KiB each, within " +
                       std::to_string(kMaxPlanBytes >> 20) + " MiB)",
                   std::to_string(cells) + " cells");
}

/// Each --grid value alone first, so a bad key or value is named by itself; then every cell,
/// since values can clash with each other (more servers than workers). Zipped values are
/// checked only in their cells: they are meant to hold together (servers with nodes).
std::vector<GridCell> load_cells(const SweepSpec& spec, Diagnostics& diagnostics) {
  for (const GridAxis& axis : spec.grid) {
    if (axis.zipped) continue;
    for (const std::string& value : axis.values)
      load_with(spec, {axis.key + "=" + value}, diagnostics);
  }
  std::vector<GridCell> cells(1);
  cells.front().values.resize(spec.grid.size());
  for (const std::vector<std::size_t>& dimension : grid_dimensions(spec.grid)) {
    std::vector<GridCell> product;
    for (const GridCell& cell : cells) {
      for (std::size_t i = 0; i < spec.grid[dimension.front()].values.size(); ++i) {
        product.push_back(cell);
        for (const std::size_t a : dimension) product.back().values[a] = spec.grid[a].values[i];
      }
    }
    cells = std::move(product);
  }
  for (GridCell& cell : cells) {
    std::vector<std::string> assignments;
    for (std::size_t a = 0; a < spec.grid.size(); ++a)
      assignments.push_back(spec.grid[a].key + "=" + cell.values[a]);
    for (const std::string& assignment : assignments)
      cell.label += (cell.label.empty() ? "" : " ") + assignment;
    cell.scenario = load_with(spec, assignments, diagnostics);
  }
  return cells;
}

/// Why the policy cannot run on the scenario: a starting batch outside the bounds or more than
/// some worker's memory holds (a static batch too big), or a worker that holds no sample.
std::optional<std::string> infeasibility(const Scenario& scenario, int batch,
                                         const EnvOptions& options) {
  if (batch > 0 && (batch < options.min_batch || batch > options.max_batch)) {
    return "batch " + std::to_string(batch) + " outside the bounds " +
           std::to_string(options.min_batch) + ".." + std::to_string(options.max_batch);
  }
  for (const std::size_t host : scenario.worker_hosts) {
    const NodeSpec& node = scenario.topology.hosts()[host];
    const int most = max_batch(node, scenario.cost);
    if (most >= std::max(batch, 1)) continue;
    return "worker " + node.name + " (" + node.gpu + ") holds at most " + std::to_string(most) +
           " samples of " + scenario.workload.name + " in memory; the policy needs " +
           std::to_string(std::max(batch, 1));
  }
  return std::nullopt;
}

/// Per-iteration sums an EpisodeResult does not carry.
struct IterationTotals {
  std::int64_t iterations = 0;
  double time_s = 0;
  double comm_s = 0;
  double wait_s = 0;
  double retransmits = 0;
  double timeouts = 0;

  void add(const IterationRecord& record) {
    ++iterations;
    time_s += to_seconds(record.end - record.start);
    const double workers = static_cast<double>(std::max<std::size_t>(1, record.workers.size()));
    for (const WorkerIteration& worker : record.workers) {
      comm_s += worker.comm_s / workers;
      wait_s += worker.wait_s / workers;
      retransmits += worker.retransmits;
      timeouts += worker.timeouts;
    }
  }
};

struct EpisodeOutcome {
  std::optional<std::string> infeasible;
  EpisodeResult episode;
  IterationTotals totals;
};

EpisodeOutcome run_one(const SweepPlan& plan, std::size_t index,
                       const std::function<void()>& check_stop) {
  const GridCell& cell = plan.cells[plan.cell_of(index)];
  const std::uint64_t seed = plan.seed_of(index);
  // A policy per episode, seeded by it: results do not depend on which thread ran what before.
  const std::unique_ptr<Policy> policy = plan.make_policy(plan.spec.policies[plan.policy_of(index)],
                                                          seed, plan.env_options, "--policies");
  EpisodeOutcome outcome;
  outcome.infeasible = infeasibility(*cell.scenario, policy->initial_batch(), plan.env_options);
  if (outcome.infeasible) return outcome;
  BatchSizeEnv env(std::make_shared<FixedScenario>(cell.scenario), plan.env_options);
  env.set_iteration_observer([&](const TrainingRun&, const IterationRecord& record) {
    check_stop();
    outcome.totals.add(record);
  });
  outcome.episode = run_episode(env, *policy, seed);
  if (!outcome.episode.feasible) outcome.infeasible = "the environment had to clamp the batch";
  return outcome;
}

void write_outcome(CsvWriter& row, const EpisodeOutcome& outcome) {
  if (outcome.infeasible) {
    row << "infeasible" << 0;
    for (std::size_t i = 4; i + 1 < kResultColumns.size(); ++i) row << "";
    row << *outcome.infeasible;
    return;
  }
  const EpisodeResult& episode = outcome.episode;
  const IterationTotals& totals = outcome.totals;
  const double time_s = std::max(totals.time_s, 1e-300);
  row << "ok" << (episode.time_to_target_s ? 1 : 0);
  if (episode.time_to_target_s) {
    row << *episode.time_to_target_s;
  } else {
    row << "";
  }
  row << episode.final_accuracy << episode.total_time_s << totals.iterations
      << totals.time_s / static_cast<double>(std::max<std::int64_t>(1, totals.iterations))
      << totals.comm_s / time_s << totals.wait_s / time_s << episode.mean_batch_size
      << episode.decisions << totals.retransmits << totals.timeouts << episode.events << "";
}

/// Runs episode `index` and gives its record: the results.csv row and its wall time.
std::string episode_record(const SweepPlan& plan, std::size_t index,
                           const std::function<void()>& check_stop) {
  const auto start = std::chrono::steady_clock::now();
  const EpisodeOutcome outcome = run_one(plan, index, check_stop);
  std::vector<std::string> columns = plan.columns();
  columns.push_back("wall_s");
  CsvWriter row(columns);
  row << plan.cell_of(index);
  for (const std::string& value : plan.cells[plan.cell_of(index)].values) row << value;
  row << plan.policy_labels[plan.policy_of(index)]
      << static_cast<std::int64_t>(plan.seed_of(index));
  write_outcome(row, outcome);
  row << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  row.end_row();
  return row.text();
}

std::string clock_text(double seconds) {
  const std::int64_t whole = std::llround(seconds);
  char text[32];
  std::snprintf(text, sizeof text, "%lld:%02lld", static_cast<long long>(whole / 60),
                static_cast<long long>(whole % 60));
  return text;
}

/// The progress line: episodes done of all, jobs, time elapsed and left.
struct SweepClock {
  std::size_t done_before;
  std::size_t total;
  std::size_t expected;
  std::size_t kept_before;
  std::size_t jobs;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();

  void show(Progress& progress, std::size_t kept) const {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::size_t finished = kept - kept_before;
    const std::size_t done = done_before + finished;
    const std::string left =
        finished == 0 ? "-"
                      : clock_text(elapsed / static_cast<double>(finished) *
                                   static_cast<double>(expected - std::min(expected, finished)));
    progress.update(static_cast<double>(done) / static_cast<double>(total),
                    std::to_string(done) + "/" + std::to_string(total) + " episodes | " +
                        std::to_string(jobs) + " jobs | " + clock_text(elapsed) + " elapsed, " +
                        left + " left");
  }
};

}  // namespace

RecordSink write_to(const CellRecords& records) {
  return [&records](std::size_t index, const std::string& record) { records.write(index, record); };
}

void run_sweep_episodes(const SweepPlan& plan, EpisodeFeed& feed, std::size_t expected, int jobs,
                        const InterruptScope& interrupt, Progress& progress, std::size_t recorded) {
  const SweepClock clock{recorded, plan.episodes(), expected, feed.kept(),
                         feed_threads(jobs, expected)};
  run_feed(
      feed, expected, jobs,
      [&plan](std::size_t i, const std::function<void()>& check_stop) {
        return episode_record(plan, i, check_stop);
      },
      interrupt, [&] { clock.show(progress, feed.kept()); });
}

std::string describe_sweep(const SweepPlan& plan) {
  std::ostringstream text;
  JsonWriter json(text);
  const auto strings = [&](const std::vector<std::string>& items) {
    json.begin_array();
    for (const std::string& item : items) json.value(item);
    json.end_array();
  };
  json.begin_object();
  json.key("dynamix_version");
  json.value(kDynamixVersion);
  json.key("command");
  json.value("sweep");
  json.key("scenario");
  json.value(plan.spec.scenario);
  json.key("set");
  strings(plan.spec.overrides);
  json.key("grid");
  json.begin_object();
  std::vector<std::string> zipped;
  for (const GridAxis& axis : plan.spec.grid) {
    json.key(axis.key);
    strings(axis.values);
    if (axis.zipped) zipped.push_back(axis.key);
  }
  json.end_object();
  // Written only when given, so that run.json of a sweep without --grid-zip keeps its bytes.
  if (!zipped.empty()) {
    json.key("grid_zip");
    strings(zipped);
  }
  json.key("policies");
  strings(plan.spec.policies);
  json.key("seeds");
  json.value(plan.spec.seeds);
  json.key("seed");
  json.value(plan.spec.first_seed);
  json.key("decision_interval");
  json.value(plan.spec.decision_interval);
  json.key("cells");
  json.begin_array();
  for (const GridCell& cell : plan.cells) {
    json.begin_object();
    json.key("values");
    strings(cell.values);
    json.key("config");
    json.value(cell.scenario->resolved);
    json.end_object();
  }
  json.end_array();
  json.end_object();
  text << '\n';
  return text.str();
}

void check_same_sweep(const fs::path& file, const std::string& definition) {
  if (read_text(file.string()) == definition) return;
  throw InputError("--resume", 0, "",
                   "a folder of the same sweep (scenario, --set, --grid, --grid-zip, --policies, "
                   "--seeds, --seed, --decision-interval and dynamix version)",
                   "'" + file.parent_path().string() +
                       "', written by a different sweep; it is "
                       "left as it is");
}

namespace {

/// The fields of one row as CsvWriter writes them (quotes removed).
std::vector<std::string> parse_row(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += c;
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

bool is_number(const std::string& text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && std::isfinite(value);
}

/// What is wrong with a record's row for episode `index` of `plan`, as the column at fault, what
/// it should hold and what it does hold; none when nothing is.
struct Mismatch {
  std::string column;
  std::string expected;
};

std::optional<Mismatch> mismatch(const SweepPlan& plan, std::size_t index,
                                 const std::vector<std::string>& fields) {
  const std::vector<std::string> columns = plan.columns();
  const auto at = [&](const std::string& column) -> const std::string& {
    return fields[static_cast<std::size_t>(std::find(columns.begin(), columns.end(), column) -
                                           columns.begin())];
  };
  std::vector<std::string> identity = {std::to_string(plan.cell_of(index))};
  const std::vector<std::string>& values = plan.cells[plan.cell_of(index)].values;
  identity.insert(identity.end(), values.begin(), values.end());
  identity.push_back(plan.policy_labels[plan.policy_of(index)]);
  identity.push_back(std::to_string(plan.seed_of(index)));
  for (std::size_t c = 0; c < identity.size(); ++c) {
    if (fields[c] != identity[c]) {
      return Mismatch{columns[c], excerpt(identity[c]) + " (episode " + std::to_string(index) +
                                      " of this sweep)"};
    }
  }
  const std::string& status = at("status");
  if (status != "ok" && status != "infeasible") return Mismatch{"status", "ok or infeasible"};
  const bool ok = status == "ok";
  if (at("reached") != "0" && !(ok && at("reached") == "1")) {
    return Mismatch{"reached", ok ? "0 or 1" : "0 for an infeasible episode"};
  }
  if (ok != at("reason").empty()) {
    return Mismatch{"reason", ok ? "none for an ok episode" : "why the episode is infeasible"};
  }
  const auto first_number = std::find(columns.begin(), columns.end(), "time_to_target_s");
  for (auto column = first_number; ok && column + 1 != columns.end(); ++column) {
    const bool absent = *column == "time_to_target_s" && at("reached") == "0";
    if (absent ? !at(*column).empty() : !is_number(at(*column))) {
      return Mismatch{*column, absent ? "none for an episode that did not reach the target"
                                      : "a finite number"};
    }
  }
  if (!is_number(fields.back()) || std::stod(fields.back()) < 0) {
    return Mismatch{"wall_s", "a number of seconds >= 0"};
  }
  return std::nullopt;
}

}  // namespace

std::optional<EpisodeRecord> read_record(const SweepPlan& plan, const CellRecords& records,
                                         std::size_t index) {
  const std::optional<std::string> text = records.read(index);
  if (!text) return std::nullopt;
  std::vector<std::string> columns = plan.columns();
  columns.push_back("wall_s");
  std::string header = CsvWriter(columns).text();
  const std::string file = records.record(index).string();
  if (!text->starts_with(header)) {
    throw InputError(file, 1, "", "the header of this sweep's records", excerpt(*text));
  }
  std::string row = text->substr(header.size());
  if (!row.ends_with('\n') || std::count(row.begin(), row.end(), '\n') != 1) {
    throw InputError(file, 2, "", "one row ending with a newline", excerpt(row));
  }
  row.pop_back();
  EpisodeRecord record{row.substr(0, row.rfind(',')), parse_row(row)};
  if (record.fields.size() != columns.size()) {
    throw InputError(file, 2, "", std::to_string(columns.size()) + " fields",
                     std::to_string(record.fields.size()));
  }
  if (const auto wrong = mismatch(plan, index, record.fields)) {
    const auto column = std::find(columns.begin(), columns.end(), wrong->column);
    throw InputError(file, 2, wrong->column, wrong->expected,
                     excerpt(record.fields[static_cast<std::size_t>(column - columns.begin())]));
  }
  return record;
}

namespace {

/// Every episode's record, in episode order.
struct SweepRows {
  std::string header;
  /// results.csv lines (the record without its wall time) and their fields.
  std::vector<std::string> lines;
  std::vector<std::vector<std::string>> fields;
  std::vector<double> wall_s;
};

SweepRows read_records(const SweepPlan& plan, const CellRecords& records) {
  SweepRows rows;
  rows.header = CsvWriter(plan.columns()).text();
  rows.header.pop_back();
  for (std::size_t i = 0; i < plan.episodes(); ++i) {
    std::optional<EpisodeRecord> record = read_record(plan, records, i);
    DYNAMIX_CHECK(record.has_value(), "episode " << i << " has no record");
    rows.wall_s.push_back(std::stod(record->fields.back()));
    record->fields.pop_back();
    rows.lines.push_back(std::move(record->line));
    rows.fields.push_back(std::move(record->fields));
  }
  return rows;
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

/// One summary.md row: a cell and policy over its seeds.
std::string summary_row(const SweepPlan& plan, const SweepRows& rows, std::size_t first) {
  const std::vector<std::string> columns = plan.columns();
  const auto at = [&](std::size_t row, const std::string& column) -> const std::string& {
    return rows.fields[row][static_cast<std::size_t>(
        std::find(columns.begin(), columns.end(), column) - columns.begin())];
  };
  std::string line = "| " + plan.cells[plan.cell_of(first)].label + " | " +
                     plan.policy_labels[plan.policy_of(first)] + " | ";
  if (at(first, "status") == "infeasible") return line + "infeasible | | | | |\n";
  std::vector<double> times, accuracies, iteration_s, comm_share;
  for (std::size_t row = first; row < first + plan.seeds(); ++row) {
    if (at(row, "reached") == "1") times.push_back(std::stod(at(row, "time_to_target_s")));
    accuracies.push_back(std::stod(at(row, "final_accuracy")));
    iteration_s.push_back(std::stod(at(row, "mean_iteration_s")));
    comm_share.push_back(std::stod(at(row, "comm_share")));
  }
  const Interval time = bootstrap_mean(times, 1);
  const auto mean = [](const std::vector<double>& values) {
    return bootstrap_mean(values, 1, 1).mean;
  };
  line += std::to_string(times.size()) + "/" + std::to_string(plan.seeds()) + " | ";
  line += times.empty()
              ? "not reached"
              : fixed(time.mean, 1) + " [" + fixed(time.low, 1) + ", " + fixed(time.high, 1) + "]";
  return line + " | " + fixed(mean(accuracies), 4) + " | " + format_rounded(mean(iteration_s)) +
         " | " + fixed(mean(comm_share), 3) + " |\n";
}

void write_summary(std::ostream& out, const SweepPlan& plan, const SweepRows& rows) {
  out << "# Sweep\n\n"
      << plan.spec.scenario << ": " << plan.cells.size() << " cells × " << plan.spec.policies.size()
      << " policies × " << plan.seeds() << " seeds (from " << plan.spec.first_seed
      << ").\n\nTime to target: simulated seconds, mean [95% bootstrap "
      << "interval] over the seeds that reached the target. Final accuracy, mean iteration time "
      << "(s) and communication share (of iteration time): means over all seeds. Infeasible: the "
      << "policy's batch does not fit the cluster (the reason is in results.csv).\n\n"
      << "| cell | policy | reached | time_to_target_s | final_accuracy | mean_iteration_s | "
      << "comm_share |\n|---|---|---|---|---|---|---|\n";
  for (std::size_t first = 0; first < plan.episodes(); first += plan.seeds())
    out << summary_row(plan, rows, first);
}

}  // namespace

void write_sweep_outputs(const SweepPlan& plan, const CellRecords& records,
                         const RunDirectory& directory) {
  const SweepRows rows = read_records(plan, records);
  std::string results = rows.header + "\n";
  for (const std::string& line : rows.lines) results += line + "\n";
  std::ofstream(directory.file("results.csv"), std::ios::binary) << results;
  CsvWriter timing(directory.file("timing.csv"), {"cell", "policy", "seed", "wall_s"});
  for (std::size_t i = 0; i < plan.episodes(); ++i) {
    timing << plan.cell_of(i) << plan.policy_labels[plan.policy_of(i)]
           << static_cast<std::int64_t>(plan.seed_of(i)) << rows.wall_s[i];
    timing.end_row();
  }
  timing.close();
  std::ofstream summary(directory.file("summary.md"), std::ios::binary);
  write_summary(summary, plan, rows);
  if (!summary.flush() || !std::ifstream(directory.file("results.csv"))) {
    throw InputError(directory.final_path().string(), 0, "", "writable result files");
  }
  std::error_code ignored;
  fs::remove_all(directory.file("episodes"), ignored);
}

SweepPlan make_sweep_plan(SweepSpec spec, const std::vector<std::string>& grid,
                          const std::string& policy_list, PolicyMaker make_policy,
                          const std::vector<std::string>& grid_zip, Diagnostics& diagnostics) {
  spec.scenario = resolve_scenario(spec.scenario);
  spec.grid = parse_grid(grid, grid_zip);
  spec.policies = split_fields(policy_list, ',');
  const std::set<std::string> distinct(spec.policies.begin(), spec.policies.end());
  if (distinct.count("") > 0 || distinct.size() != spec.policies.size()) {
    throw InputError("--policies", 0, "", "distinct policies separated by commas",
                     excerpt(policy_list));
  }
  require_grid_fits(spec, load_scenario(spec.scenario, spec.overrides, diagnostics));
  SweepPlan plan;
  plan.make_policy = std::move(make_policy);
  plan.env_options.decision_interval = spec.decision_interval;
  plan.env_options.stop_at_target = false;
  plan.spec = std::move(spec);
  plan.cells = load_cells(plan.spec, diagnostics);
  for (const std::string& name : plan.spec.policies) {
    plan.policy_labels.push_back(plan.make_policy(name,
                                                  static_cast<std::uint64_t>(plan.spec.first_seed),
                                                  plan.env_options, "--policies")
                                     ->name());
  }
  return plan;
}

}  // namespace dynamix
