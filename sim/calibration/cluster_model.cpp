// Simulating measured configurations.
#include "sim/calibration/cluster_model.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>

#include "sim/cluster/collective.h"
#include "sim/core/simulator.h"
#include "sim/io/diagnostics.h"
#include "sim/io/input_error.h"
#include "sim/network/network.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/training_run.h"

namespace dynamix {
namespace {

/// Noise-free compute: no static spread, outliers, jitter or stragglers.
constexpr const char* kNoVariability[] = {
    "variability.gpu_spread=0", "variability.outlier_probability=0", "variability.jitter_sigma=0",
    "variability.straggler_rate_per_hour=0"};

Scenario scenario_for(const ClusterModel& model, int ranks, std::span<const std::string> extra) {
  std::vector<std::string> overrides = model.overrides;
  overrides.insert(overrides.end(), std::begin(kNoVariability), std::end(kNoVariability));
  overrides.push_back(model.ranks_key + "=" + std::to_string(ranks));
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  // Quiet: the commands check the model's own values once, and a fit's candidates are its own.
  Diagnostics quiet;
  Scenario scenario = load_scenario(model.scenario, overrides, quiet);
  if (scenario.worker_hosts.size() != static_cast<std::size_t>(ranks)) {
    throw InputError(model.scenario, 0, model.ranks_key,
                     "a key that sets the number of workers to " + std::to_string(ranks),
                     std::to_string(scenario.worker_hosts.size()) + " workers");
  }
  return scenario;
}

/// One all-reduce of `bytes` from every worker, built as TrainingRun builds its synchronizer:
/// the time until the last worker holds the result.
double allreduce_seconds(const Scenario& scenario, double bytes) {
  Simulator sim;
  Topology topology = scenario.topology;
  Network network(sim, topology.links(), scenario.network);
  for (const auto& attachment : scenario.traces)
    network.add_trace(attachment.link, attachment.trace);
  Synchronizer synchronizer(sim, network, topology, scenario.sync, scenario.worker_hosts,
                            scenario.server_hosts);
  double slowest = 0;
  synchronizer.start(bytes, [&](std::span<const WorkerSyncStats> stats) {
    for (const WorkerSyncStats& s : stats) slowest = std::max(slowest, to_seconds(s.duration));
    sim.stop();
  });
  sim.run();
  return slowest;
}

SimulatedTimes iteration_times(const Scenario& scenario, const Measurement& row,
                               const std::string& source) {
  TrainingRun run(scenario, scenario.seed);
  const std::vector<int> batches =
      row.batches.empty() ? std::vector<int>(run.workers(), row.batch_per_rank) : row.batches;
  for (std::size_t w = 0; w < run.workers(); ++w) {
    if (batches[w] > run.max_batch(w)) {
      throw InputError(source, row.line, "batch_per_rank",
                       "a batch that fits rank " + std::to_string(w) + "'s memory (at most " +
                           std::to_string(run.max_batch(w)) + ")",
                       std::to_string(batches[w]));
    }
  }
  const IterationRecord& record = run.step(batches);
  SimulatedTimes times;
  for (const WorkerIteration& worker : record.workers) {
    times.compute_s += std::max(worker.load_s, worker.compute_s);
    times.comm_s += worker.comm_s + (row.comm_includes_wait ? worker.wait_s : 0.0);
  }
  times.compute_s /= static_cast<double>(record.workers.size());
  times.comm_s /= static_cast<double>(record.workers.size());
  times.total_s = to_seconds(record.end - record.start);
  return times;
}

}  // namespace

std::string override_text(const std::string& key, double value) {
  std::ostringstream text;
  text.precision(17);
  text << key << '=' << value;
  return text.str();
}

std::optional<std::string> device_time_points(std::span<const Measurement> rows,
                                              const std::string& device) {
  std::map<int, double> points;
  for (const Measurement& row : rows) {
    if (row.kind == MeasurementKind::kCompute && row.ranks == 1)
      points[row.batch_per_rank] = row.compute_s.value_or(row.total_s);
  }
  if (points.empty()) return std::nullopt;
  std::ostringstream text;
  text.precision(17);
  text << "devices." << device << ".time_points=[";
  for (auto it = points.begin(); it != points.end(); ++it)
    text << (it == points.begin() ? "" : ", ") << '[' << it->first << ", " << it->second << ']';
  text << ']';
  return text.str();
}

void check_model(const ClusterModel& model, Diagnostics& diagnostics) {
  load_scenario(model.scenario, model.overrides, diagnostics);
}

std::vector<SimulatedTimes> simulate_configurations(const ClusterModel& model,
                                                    std::span<const Measurement> rows,
                                                    std::span<const std::string> extra) {
  std::map<int, Scenario> scenarios;
  std::vector<SimulatedTimes> simulated;
  for (const Measurement& row : rows) {
    auto found = scenarios.find(row.ranks);
    if (found == scenarios.end())
      found = scenarios.emplace(row.ranks, scenario_for(model, row.ranks, extra)).first;
    const Scenario& scenario = found->second;
    if (row.kind == MeasurementKind::kAllReduce) {
      const double seconds = allreduce_seconds(scenario, row.message_bytes);
      simulated.push_back({.compute_s = 0, .comm_s = seconds, .total_s = seconds});
    } else {
      simulated.push_back(iteration_times(scenario, row, model.scenario));
    }
  }
  return simulated;
}

}  // namespace dynamix
