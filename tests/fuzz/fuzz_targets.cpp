// The loaders under fuzzing, each driven the way the dynamix command drives it.
#include "tests/fuzz/fuzz_targets.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "apps/batch_plan.h"
#include "dynamix_config.h"
#include "gym/env_knobs.h"
#ifdef DYNAMIX_PROTOCOL
#include <google/protobuf/util/json_util.h>

#include "adapter/server/http2_ledger.h"
#include "adapter/server/report.h"
#include "policies/baselines/baselines.h"
#endif
#include "gym/batch_size_env.h"
#include "gym/observation.h"
#include "policies/export/policy_metadata.h"
#include "sim/calibration/measurements.h"
#include "sim/cluster/gpu_catalog.h"
#include "sim/io/config_node.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/training_run.h"

namespace dynamix::fuzz {
namespace {

/// Topologies larger than this are loaded but not simulated (an iteration would dominate).
constexpr std::size_t kMaxSimulatedHosts = 64;

/// A folder for this process's input files, removed when the process exits normally.
class ScratchDirectory {
 public:
  ScratchDirectory() : path_(scratch_directory(::getpid())) {
    std::filesystem::create_directories(path_);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  /// Writes `text` to `name` in the folder and returns the file's path.
  std::string write(const std::string& name, std::string_view text) const {
    const std::filesystem::path file = path_ / name;
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) throw std::runtime_error("cannot write fuzz input " + file.string());
    return file.string();
  }

 private:
  std::filesystem::path path_;
};

const ScratchDirectory& scratch() {
  static const ScratchDirectory directory;
  return directory;
}

/// What `dynamix simulate` does with an accepted scenario before its loop: every worker at the
/// scenario's batch (refused above its memory limit), then one iteration.
void simulate_one_iteration(const Scenario& scenario) {
  if (scenario.topology.hosts().size() > kMaxSimulatedHosts) return;
  TrainingRun run(scenario, scenario.seed);
  std::vector<int> batches(run.workers(), scenario.batch_size);
  for (std::size_t w = 0; w < run.workers(); ++w) {
    if (batches[w] > run.max_batch(w)) return;  // simulate refuses this with an InputError
  }
  const IterationRecord& record = run.step(batches);
  if (!(record.end >= record.start)) {
    throw AcceptedInvalidInput("an iteration that ends before it starts");
  }
}

/// Checks on what load_scenario accepted, from its documented ranges.
void check_scenario(const Scenario& scenario) {
  if (scenario.batch_size < 1) {
    throw AcceptedInvalidInput("accepted batch_size " + std::to_string(scenario.batch_size));
  }
  const bool parameter_server = scenario.sync.architecture == SyncArchitecture::kParameterServer;
  const int servers = scenario.sync.servers.value_or(1);
  if (servers < 1 || (parameter_server &&
                      static_cast<std::size_t>(servers) >
                          std::max(scenario.worker_hosts.size(), scenario.server_hosts.size()))) {
    throw AcceptedInvalidInput("accepted sync.servers " + std::to_string(servers) + " with " +
                               std::to_string(scenario.worker_hosts.size()) + " workers and " +
                               std::to_string(scenario.server_hosts.size()) + " server nodes");
  }
}

void run_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  std::optional<Scenario> scenario;
  try {
    scenario.emplace(load_scenario(path, overrides));
  } catch (const InputError&) {
    return;
  }
  check_scenario(*scenario);
  try {
    simulate_one_iteration(*scenario);
  } catch (const InputError&) {
  }
}

std::optional<int> parse_small_count(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < 0 || value > 256) {
    return std::nullopt;
  }
  return value;
}

constexpr std::array kTargets = {
    NamedTarget{"scenario", fuzz_scenario, "a scenario YAML file"},
    NamedTarget{"topology", fuzz_topology, "a topology YAML file"},
    NamedTarget{"trace", fuzz_trace, "a bandwidth trace CSV file"},
    NamedTarget{"batch_plan", fuzz_batch_plan,
                "lines: --batch-size, --batch-sizes, --schedule, worker count"},
    NamedTarget{"overrides", fuzz_overrides,
                "lines: an embedded scenario name, then --set KEY=VALUE assignments"},
#ifdef DYNAMIX_PROTOCOL
    NamedTarget{"report", fuzz_report, "a WindowReport, protobuf JSON or binary"},
    NamedTarget{"gate", fuzz_gate, "a client's HTTP/2 bytes, preface first"},
#endif
    NamedTarget{"measurements", fuzz_measurements, "a measurement CSV (dynamix calibrate)"},
    NamedTarget{"policy_metadata", fuzz_policy_metadata,
                "a policy archive's extra files, each opened by a line '== name'"},
};

}  // namespace

std::filesystem::path scratch_directory(int pid) {
  return std::filesystem::temp_directory_path() / ("dynamix-fuzz-" + std::to_string(pid));
}

std::string as_text(std::span<const std::uint8_t> input) {
  return std::string(reinterpret_cast<const char*>(input.data()), input.size());
}

std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const auto newline = text.find('\n', begin);
    if (newline == std::string_view::npos) {
      if (begin < text.size()) lines.emplace_back(text.substr(begin));
      break;
    }
    lines.emplace_back(text.substr(begin, newline - begin));
    begin = newline + 1;
  }
  return lines;
}

void fuzz_scenario(std::span<const std::uint8_t> input) {
  run_scenario(scratch().write("scenario.yaml", as_text(input)), {});
}

void fuzz_topology(std::span<const std::uint8_t> input) {
  Topology topology;
  try {
    topology =
        Topology::load(ConfigNode::parse(as_text(input), "topology.yaml"), GpuCatalog::builtin());
  } catch (const InputError&) {
    return;
  }
  const auto workers = topology.workers();
  if (workers.empty() || topology.hosts().size() > kMaxSimulatedHosts) return;
  std::vector<std::pair<std::size_t, std::size_t>> ring;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    ring.emplace_back(workers[i], workers[(i + 1) % workers.size()]);
  }
  topology.precompute_routes(ring);
  for (const auto& [from, to] : ring) {
    if (!topology.has_route(from, to)) {
      throw AcceptedInvalidInput("a connected topology without a route between hosts " +
                                 std::to_string(from) + " and " + std::to_string(to));
    }
    (void)topology.route(from, to);
  }
}

void fuzz_trace(std::span<const std::uint8_t> input) {
  BandwidthTrace trace;
  try {
    trace = BandwidthTrace::load(scratch().write("trace.csv", as_text(input)));
  } catch (const InputError&) {
    return;
  }
  const Duration period = trace.period();
  for (bool repeat : {false, true}) {
    trace.repeat = repeat;
    // BandwidthTrace::load keeps offsets below 1e6 s, so three periods fit in int64.
    for (Duration offset : {Duration{0}, period / 2, period, period * 3 + Duration{1}}) {
      const double gbps = trace.background_gbps_at(offset);
      if (!(gbps >= 0)) throw AcceptedInvalidInput("a background of " + std::to_string(gbps));
    }
  }
  // The uplink of background8 replays it, repeating: one iteration must stay cheap.
  static const Scenario base = load_scenario("embedded:/scenarios/background8.yaml");
  ScenarioSpec spec = base.spec();
  spec.traces.at(0).trace = trace;
  spec.traces.at(0).trace.repeat = true;
  try {
    simulate_one_iteration(Scenario(std::move(spec)));
  } catch (const InputError&) {
  }
}

void fuzz_batch_plan(std::span<const std::uint8_t> input) {
  std::vector<std::string> lines = split_lines(as_text(input));
  lines.resize(std::max<std::size_t>(lines.size(), 4));
  const int workers = parse_small_count(lines[3]).value_or(8);
  try {
    const BatchPlan plan =
        BatchPlan::parse(lines[0], lines[1], lines[2], static_cast<std::size_t>(workers), 128);
    for (double epochs : {0.0, 0.5, 1.0, 10.0, 1e9}) {
      const std::vector<int>& batches = plan.at_epoch(epochs);
      if (batches.size() != static_cast<std::size_t>(workers)) {
        throw AcceptedInvalidInput("a plan with " + std::to_string(batches.size()) +
                                   " batches for " + std::to_string(workers) + " workers");
      }
      for (int batch : batches) {
        if (batch < 1) throw AcceptedInvalidInput("accepted batch " + std::to_string(batch));
      }
    }
  } catch (const InputError&) {
  }
}

void fuzz_overrides(std::span<const std::uint8_t> input) {
  std::vector<std::string> lines = split_lines(as_text(input));
  std::string path = kDefaultScenario;
  if (!lines.empty()) {
    const std::string candidate = "embedded:/scenarios/" + lines.front() + ".yaml";
    const auto embedded = embedded_paths();
    if (std::find(embedded.begin(), embedded.end(), candidate.substr(10)) != embedded.end()) {
      path = candidate;
      lines.erase(lines.begin());
    }
  }
  run_scenario(path, lines);
}

void fuzz_measurements(std::span<const std::uint8_t> input) {
  MeasurementFile file;
  try {
    file = read_measurements(scratch().write("measurements.csv", as_text(input)));
  } catch (const InputError&) {
    return;
  }
  if (file.rows.empty()) throw AcceptedInvalidInput("a measurement file without rows");
  std::set<std::string> labels;
  for (const Measurement& row : file.rows) {
    const std::string label = configuration_label(row);
    if (!labels.insert(label).second) throw AcceptedInvalidInput("two rows of " + label);
    const bool times_valid =
        std::isfinite(row.total_s) && row.total_s > 0 &&
        (!row.compute_s || (std::isfinite(*row.compute_s) && *row.compute_s >= 0)) &&
        (!row.comm_s || (std::isfinite(*row.comm_s) && *row.comm_s >= 0));
    if (!times_valid || row.ranks < 1) throw AcceptedInvalidInput("accepted row " + label);
    if (row.kind == MeasurementKind::kAllReduce ? !(row.message_bytes > 0)
                                                : row.batch_per_rank < 1) {
      throw AcceptedInvalidInput("accepted an empty configuration " + label);
    }
  }
}

void fuzz_policy_metadata(std::span<const std::uint8_t> input) {
  std::map<std::string, std::string> files;
  std::string* current = nullptr;
  for (const std::string& line : split_lines(as_text(input))) {
    if (line.starts_with("== ")) {
      current = &files[line.substr(3)];
    } else if (current != nullptr) {
      if (!current->empty()) *current += '\n';
      *current += line;
    }
  }
  static const std::string environment_schema = ObservationBuilder().schema().to_json();
  static const std::vector<int> environment_actions = default_actions(ActionBase::kBalanced);
  try {
    const PolicyMetadata metadata = from_extra_files(files, "policy.pt");
    if (metadata.min_batch < 1 || metadata.max_batch < metadata.min_batch ||
        metadata.decision_interval < 1) {
      throw AcceptedInvalidInput("accepted bounds [" + std::to_string(metadata.min_batch) + ", " +
                                 std::to_string(metadata.max_batch) + "], decision interval " +
                                 std::to_string(metadata.decision_interval));
    }
    require_compatible(metadata, environment_schema, environment_actions, "policy.pt");
  } catch (const InputError&) {
  }
}

#ifdef DYNAMIX_PROTOCOL
void fuzz_report(std::span<const std::uint8_t> input) {
  wire::WindowReport report;
  const std::string text = as_text(input);
  // Protobuf JSON (the decision log's form) lets the text mutations reach every field's range;
  // anything else is read as the wire's binary form.
  const bool parsed = text.starts_with("{")
                          ? google::protobuf::util::JsonStringToMessage(text, &report).ok()
                          : report.ParseFromArray(input.data(), static_cast<int>(input.size()));
  if (!parsed) return;
  const auto workers = static_cast<std::size_t>(report.metrics().workers_size());
  if (workers == 0 || input.size() > max_report_bytes(workers)) return;
  try {
    check_report(report, workers);
    const WindowMetrics window = to_window_metrics(report.metrics());
    static const ObservationBuilder builder;
    Observation observation;
    builder.build(window, observation);
    const EnvOptions options = served_options(evaluation_env_options(), report);
    const std::vector<int> reported = reported_batches(report.metrics());
    const std::vector<int> caps = batch_caps(report, options.max_batch);
    const std::vector<double> leaving = leaving_in_s(report.metrics());
    const DecisionContext context{.options = options,
                                  .window = window,
                                  .batches = reported,
                                  .max_batches = caps,
                                  .reference_batch = report.reference_batch(),
                                  .epochs = report.metrics().epochs(),
                                  .leaving_in_s = leaving};
    const std::unique_ptr<Policy> rule = make_baseline("goodput-notice:100", 1, "fuzz");
    rule->begin_episode(context);
    const GuardRails rails;
    wire::Decision decision;
    bounded_decision(report, window, rule->decide(context, observation), caps, options.min_batch,
                     rails, decision);
    for (int w = 0; w < decision.batches_size(); ++w) {
      if (decision.batches(w) < 1 || decision.batches(w) > caps[static_cast<std::size_t>(w)]) {
        throw AcceptedInvalidInput("decided batch " + std::to_string(decision.batches(w)) +
                                   " for worker " + std::to_string(w));
      }
    }
    if (!(decision.lr_factor() > 0 && decision.lr_factor() <= rails.max_lr_factor)) {
      throw AcceptedInvalidInput("decided LR factor " + std::to_string(decision.lr_factor()));
    }
  } catch (const ReportError&) {
  }
}
#endif

#ifdef DYNAMIX_PROTOCOL
void fuzz_gate(std::span<const std::uint8_t> input) {
  // A client's bytes in chunks of 1 to 64 (one second apart every 16 chunks), and a server that
  // ends every stream the client finished: the ledger cuts or keeps, and never holds more request
  // bytes than it was sent.
  const GateLimits limits;
  const GateClock::time_point start{};
  ConnectionLedger ledger(limits, start);
  std::size_t at = 0, chunk = 0;
  while (at < input.size()) {
    const std::size_t size = std::min<std::size_t>(1 + input[at] % 64, input.size() - at);
    const GateClock::time_point now = start + std::chrono::seconds(chunk++ / 16);
    if (!ledger.client_bytes(input.data() + at, size, now).empty()) return;
    at += size;
    if (ledger.pending_bytes() > at) {
      throw AcceptedInvalidInput("pending " + std::to_string(ledger.pending_bytes()) +
                                 " bytes of " + std::to_string(at) + " sent");
    }
    [[maybe_unused]] const std::string_view overdue = ledger.overdue(now);
  }
}
#endif

std::span<const NamedTarget> targets() { return kTargets; }

const NamedTarget* find_target(std::string_view name) {
  for (const NamedTarget& target : kTargets) {
    if (target.name == name) return &target;
  }
  return nullptr;
}

}  // namespace dynamix::fuzz
