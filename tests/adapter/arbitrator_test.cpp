// The arbitrator: the protocol carries exactly the environment's window fields, reports are
// checked field by field, a simulated episode's windows get the simulation's own decisions, and
// the log reads back what was written.
#include "adapter/server/arbitrator.h"

#include <doctest/doctest.h>
#include <google/protobuf/util/message_differencer.h>
#include <stdlib.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "adapter/server/connection_gate.h"
#include "adapter/server/decision_log.h"
#include "gym/batch_size_env.h"
#include "gym/env_knobs.h"
#include "gym/rules.h"
#include "policies/baselines/baselines.h"
#include "policies/ppo/ppo_learner.h"
#include "policies/ppo/ppo_policy.h"
#include "sim/io/sources.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

namespace pb = ::google::protobuf;
using testing::TempDirectory;

constexpr GuardRails kUnbounded{
    .max_batch_change = 1e9, .max_lr_change = 1e9, .max_lr_factor = 1e9};

std::vector<std::string> field_names(const pb::Descriptor* descriptor) {
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(descriptor->field_count()));
  for (int i = 0; i < descriptor->field_count(); ++i) names.push_back(descriptor->field(i)->name());
  return names;
}

/// A randomly initialized policy for this build's schema and action set.
std::filesystem::path write_policy(const TempDirectory& directory, ActionBase base) {
  const ObservationBuilder builder;
  const EnvOptions options = evaluation_env_options();
  const std::size_t features = builder.schema().features_per_worker();
  const PolicySnapshot snapshot =
      untrained_snapshot({.schema_json = builder.schema().to_json(),
                          .actions = default_actions(base),
                          .action_base = base,
                          .min_batch = options.min_batch,
                          .max_batch = options.max_batch,
                          .decision_interval = options.decision_interval},
                         features, 5);
  std::filesystem::path file = directory / "policy.pt";
  save_torchscript_policy(snapshot, file);
  return file;
}

wire::WindowReport report_of(const WindowMetrics& window, std::int64_t index) {
  wire::WindowReport report;
  report.set_protocol_version(wire::PROTOCOL_VERSION_1);
  report.set_job_id("test");
  report.set_window_index(index);
  report.set_iteration(window.iterations * (index + 1));
  *report.mutable_metrics() = to_wire_metrics(window);
  report.set_lr_rule(wire::LR_RULE_LINEAR);
  report.set_reference_batch(256);
  return report;
}

std::string refusal(const wire::WindowReport& report) {
  try {
    check_report(report, 4);
  } catch (const ReportError& error) {
    return error.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE(
    "The protocol's window fields are exactly gym/window_metrics.h's, in its order, then a "
    "worker's notice") {
  const std::vector<std::string> window_fields = {
      "iterations",          "time_s",           "iteration_s",
      "train_loss",          "train_accuracy",   "train_accuracy_change",
      "validation_accuracy", "progress",         "epochs",
      "epoch_budget_used",   "time_budget_used", "target_progress"};
  const std::vector<std::string> worker_fields = {
      "gpu_type",        "batch_size",      "compute_s",      "comm_s",      "wait_s",
      "throughput_gbps", "retransmit_rate", "cpu_time_ratio", "memory_util", "samples_per_s",
      "grad_std_norm",   "grad_var_norm",   "leaving_in_s"};
  std::vector<std::string> expected = field_names(wire::WindowMetrics::descriptor());
  expected.pop_back();  // "workers", the repeated block
  CHECK(expected == window_fields);
  CHECK(field_names(wire::WorkerWindow::descriptor()) == worker_fields);
}

TEST_CASE("One job per arbitrator, its windows in order: another job or an old window is refused") {
  const auto report = [](const std::string& job, std::int64_t window) {
    wire::WindowReport r;
    r.set_job_id(job);
    r.set_window_index(window);
    return r;
  };
  const auto verdict = [](const JobSequence& sequence, const wire::WindowReport& r) {
    try {
      sequence.check(r);
    } catch (const SequenceError& error) {
      return std::string(error.duplicate ? "duplicate: " : "") + error.what();
    }
    return std::string("accepted");
  };
  JobSequence first;  // bound by the first job decided for
  CHECK(verdict(first, report("a", 5)) == "accepted");
  first.decided(report("a", 5));
  CHECK(verdict(first, report("b", 6)) ==
        "out of sequence: job_id: expected 'a' (serve decides for one job: --job-id, or the "
        "first it answered; start one serve per job), found 'b'");
  CHECK(verdict(first, report("a", 5)) ==
        "duplicate: out of sequence: window_index: expected a window after 5 (the last "
        "decided), found 5 again");
  CHECK(verdict(first, report("a", 2)) ==
        "out of sequence: window_index: expected a window after 5 (the last decided), found 2");
  CHECK(verdict(first, report("a", 7)) == "accepted");  // a window refused earlier may be lost
  first.restart();
  CHECK(verdict(first, report("b", 0)) == "accepted");

  JobSequence named("real");  // bound from the start
  CHECK(verdict(named, report("intruder", 0))
            .starts_with("out of sequence: job_id: expected 'real'"));
  named.decided(report("real", 0));
  named.restart();
  CHECK(verdict(named, report("intruder", 0))
            .starts_with("out of sequence: job_id: expected 'real'"));
  CHECK(verdict(named, report("real", 0)) == "accepted");
}

TEST_CASE("check_report names the field of a malformed report and what it expected") {
  WindowMetrics window;
  window.iterations = 5;
  window.workers.assign(4, {.gpu_type = "cpu", .batch_size = 64, .compute_s = 0.1});
  const wire::WindowReport good = report_of(window, 0);
  CHECK(refusal(good) == "accepted");
  wire::WindowReport bad = good;
  bad.mutable_metrics()->mutable_workers()->RemoveLast();
  CHECK(refusal(bad) == "metrics.workers: expected 4 workers (dynamix serve --workers), found 3");
  bad = good;
  bad.mutable_metrics()->mutable_workers(1)->set_wait_s(-1);
  CHECK(refusal(bad) == "metrics.workers[1].wait_s: expected a number in [0, 1000000], found -1");
  bad = good;
  bad.mutable_metrics()->set_train_loss(INFINITY);
  CHECK(refusal(bad) ==
        "metrics.train_loss: expected a number in [-1000000000, 1000000000], found inf");
  bad = good;
  bad.mutable_metrics()->set_train_accuracy_change(-0.1);
  CHECK(refusal(bad) == "accepted");
  bad = good;
  bad.mutable_metrics()->mutable_workers(0)->set_batch_size(0.5);
  CHECK(refusal(bad) ==
        "metrics.workers[0].batch_size: expected a number in [1, 16777216], "
        "found 0.5");
  bad = good;
  bad.clear_protocol_version();
  CHECK(refusal(bad) == "protocol_version: expected 1, found 0");
  bad = good;
  bad.clear_lr_rule();
  CHECK(refusal(bad) == "lr_rule: expected one of NONE, LINEAR, SQRT, ADASCALE, found 0");
  bad = good;
  bad.set_job_id("");
  CHECK(refusal(bad) == "job_id: expected 1 to 256 characters, found 0");
  // An iteration near 2^63 would overflow apply_at_iteration.
  bad = good;
  bad.set_iteration(std::numeric_limits<std::int64_t>::max() - 2);
  CHECK(refusal(bad) ==
        "window_index, iteration: expected integers in [0, 9007199254740992], found 0, "
        "9223372036854775805");
  bad = good;
  bad.mutable_metrics()->set_iterations(std::numeric_limits<std::int64_t>::max());
  CHECK(
      refusal(bad).starts_with("metrics.iterations: expected an integer in [1, 9007199254740992]"));
}

TEST_CASE("LR factors follow the global batch by the job's rule") {
  WindowMetrics window;
  window.workers.assign(2, {.batch_size = 100, .grad_var_norm = 0.5});
  CHECK(lr_factor(LrRule::kNone, 400, 100, window) == 1.0);
  CHECK(lr_factor(LrRule::kLinear, 400, 100, window) == 4.0);
  CHECK(lr_factor(LrRule::kSqrt, 400, 100, window) == 2.0);
  // φ = σ²_norm·b = 50: gain = S·(φ + M0)/(φ + B) = 4·150/450.
  CHECK(lr_factor(LrRule::kAdaScale, 400, 100, window) == doctest::Approx(4.0 * 150 / 450));
}

TEST_CASE(
    "A simulated episode's windows sent through the arbitrator get the simulation's own "
    "decisions") {
  const TempDirectory directory;
  for (const ActionBase base : {ActionBase::kBalanced, ActionBase::kCurrent, ActionBase::kNoise}) {
    CAPTURE(action_base_name(base));
    const std::filesystem::path file = write_policy(directory, base);
    auto scenario = std::make_shared<FixedScenario>(std::make_shared<const Scenario>(
        load_scenario(kDefaultScenario, {"training.budget_epochs=1"})));
    BatchSizeEnv env(scenario, {.decision_interval = 10, .action_base = base});
    PpoPolicy policy(file, env.schema(), env.options());
    ResetResult reset = env.reset(3);
    // Unbounded guard rails: the simulation clamps only to its batch bounds.
    const Arbitrator arbitrator(file, {.workers = env.workers(), .guard_rails = kUnbounded});
    Observation observation = reset.observation;
    wire::LogRecord record;
    Arbitrator::Trace trace;
    for (std::int64_t window = 0; window < 12 && !env.episode_over(); ++window) {
      CAPTURE(window);
      arbitrator.decide(report_of(env.window(), window), record, trace);
      CHECK(trace.observation.values == observation.values);
      CHECK(record.logits().size() ==
            static_cast<int>(env.workers() * env.options().actions.size()));
      std::vector<int> expected = policy.decide(env.decision_context(), observation);
      for (int& batch : expected) {
        batch = std::clamp(batch, env.options().min_batch, env.options().max_batch);
      }
      CHECK(std::vector<int>(record.decision().batches().begin(),
                             record.decision().batches().end()) == expected);
      observation = env.step_batches(expected).observation;
    }
  }
}

TEST_CASE("A decision never gives a worker more than its measured memory holds") {
  CHECK(memory_cap(64, 0.8) == 72);                             // 64 · 0.9 / 0.8
  CHECK(memory_cap(64, 1.5) == 38);                             // already over: shrink
  CHECK(memory_cap(1, 0.99) == 1);                              // at least one sample
  CHECK(memory_cap(64, 0) == std::numeric_limits<int>::max());  // unmeasured
  const TempDirectory directory;
  const std::filesystem::path file = write_policy(directory, ActionBase::kNoise);
  auto scenario = std::make_shared<FixedScenario>(
      std::make_shared<const Scenario>(load_scenario(kDefaultScenario, {})));
  BatchSizeEnv env(scenario, {.decision_interval = 10, .action_base = ActionBase::kNoise});
  env.reset(3, {.initial_batch = 32});
  const Arbitrator arbitrator(file, {.workers = env.workers(), .guard_rails = kUnbounded});
  wire::WindowReport report = report_of(env.window(), 0);
  wire::LogRecord record;
  for (int w = 0; w < report.metrics().workers_size(); ++w) {
    report.mutable_metrics()->mutable_workers(w)->set_memory_util(0);
  }
  arbitrator.decide(report, record);
  REQUIRE(record.decision().batches(0) > 30);  // what the policy asks for, unmeasured
  for (int w = 0; w < report.metrics().workers_size(); ++w) {
    report.mutable_metrics()->mutable_workers(w)->set_memory_util(w == 0 ? 0.95 : 0.5);
  }
  arbitrator.decide(report, record);
  CHECK(record.decision().batches(0) == 30);  // 32 · 0.9 / 0.95
  for (int w = 1; w < record.decision().batches_size(); ++w) {
    CHECK(record.decision().batches(w) <= 57);  // 32 · 0.9 / 0.5
  }
}

TEST_CASE("Arbitrator refuses a policy of another schema, naming the difference") {
  const TempDirectory directory;
  const ObservationBuilder builder;
  const PolicySnapshot snapshot =
      untrained_snapshot({.schema_json = R"({"version": 1, "local": [{"name": "a", "unit": "1"}, )"
                                         R"({"name": "b", "unit": "1"}], "global": [{"name": )"
                                         R"("c", "unit": "1"}]})",
                          .actions = default_actions(ActionBase::kBalanced),
                          .min_batch = 32,
                          .max_batch = 1024,
                          .decision_interval = 10},
                         3, 1);
  save_torchscript_policy(snapshot, directory / "other.pt");
  try {
    Arbitrator arbitrator(directory / "other.pt", {.workers = 4});
    FAIL("accepted a policy of another schema");
  } catch (const PolicyFileError& error) {
    CHECK(std::string(error.what()).find("schema.json") != std::string::npos);
  }
}

TEST_CASE("The decision log reads back every record, and cuts a tail cut short by a kill") {
  const TempDirectory directory;
  const std::filesystem::path file = directory / "decisions.jsonl";
  WindowMetrics window;
  window.iterations = 5;
  window.iteration_s = 0.1 + 1e-17;
  window.workers.assign(2, {.gpu_type = "cpu", .batch_size = 64, .compute_s = 1.0 / 3});
  std::vector<wire::LogRecord> records(3);
  for (int i = 0; i < 3; ++i) {
    *records[i].mutable_report() = report_of(window, i);
    records[i].add_logits(0.1f * static_cast<float>(i) + 1e-7f);
  }
  records[1].set_refusal("report refused: because");
  {
    DecisionLogWriter log(directory.path(), {});
    for (const wire::LogRecord& record : records) log.append(record);
  }
  std::ofstream(file, std::ios::app) << R"({"report":{"job_id":"cut)";
  const DecisionLog log = read_decision_log(file);
  CHECK(log.truncated_tail);
  // The refusal is kept apart, in refusals.jsonl.
  REQUIRE(log.records.size() == 2);
  CHECK(pb::util::MessageDifferencer::Equals(log.records[0], records[0]));
  CHECK(pb::util::MessageDifferencer::Equals(log.records[1], records[2]));
  const DecisionLog refused = read_decision_log_directory(directory.path(), kRefusalLogName);
  REQUIRE(refused.records.size() == 1);
  CHECK(pb::util::MessageDifferencer::Equals(refused.records[0], records[1]));
  {
    DecisionLogWriter reopened(directory.path(), {});
    CHECK(reopened.repaired_bytes() == std::string(R"({"report":{"job_id":"cut)").size());
    reopened.append(records[0]);
  }
  const DecisionLog repaired = read_decision_log(file);
  CHECK_FALSE(repaired.truncated_tail);
  CHECK(repaired.records.size() == 3);
  std::ofstream(file, std::ios::app) << "not json\n";
  CHECK_THROWS_AS(read_decision_log(file), InputError);
}

TEST_CASE("A decision log line longer than the input bound is refused without reading it whole") {
  const TempDirectory directory;
  const std::filesystem::path file = directory.path() / kDecisionLogName;
  std::ofstream(file) << std::string(4096, '{') << '\n';
  ::setenv(kMaxInputBytesVariable, "1000", 1);
  CHECK_THROWS_WITH_AS(read_decision_log(file),
                       doctest::Contains(":1: expected a LogRecord of at most 1000 bytes"),
                       InputError);
  ::unsetenv(kMaxInputBytesVariable);
}

TEST_CASE("The decision log rotates at its size cap, keeps its last files, and reads in order") {
  const TempDirectory directory;
  WindowMetrics window;
  window.iterations = 5;
  window.workers.assign(2, {.gpu_type = "cpu", .batch_size = 64});
  {
    DecisionLogWriter log(directory.path(), {.max_bytes = 4000, .keep = 2});
    for (int i = 0; i < 40; ++i)
      log.append([&] {
        wire::LogRecord record;
        *record.mutable_report() = report_of(window, i);
        return record;
      }());
  }
  const std::vector<std::filesystem::path> files = decision_log_files(directory.path());
  REQUIRE(files.size() == 3);
  CHECK(files.front().filename() == "decisions.2.jsonl");
  CHECK(files.back().filename() == "decisions.jsonl");
  CHECK_FALSE(std::filesystem::exists(directory / "decisions.3.jsonl"));
  std::uintmax_t bytes = 0;
  for (const auto& file : files) bytes += std::filesystem::file_size(file);
  CHECK(bytes <= 3 * 4000);
  const DecisionLog log = read_decision_log_directory(directory.path());
  REQUIRE(log.records.size() > 3);
  for (std::size_t i = 1; i < log.records.size(); ++i) {
    CHECK(log.records[i].report().window_index() == log.records[i - 1].report().window_index() + 1);
  }
  CHECK(log.records.back().report().window_index() == 39);
}

TEST_CASE("A second writer on a log directory is refused while the first holds it") {
  const TempDirectory directory;
  std::optional<DecisionLogWriter> first(std::in_place, directory.path(), DecisionLogOptions{});
  CHECK_THROWS_AS(DecisionLogWriter(directory.path(), {}), InputError);
  first.reset();
  CHECK_NOTHROW(DecisionLogWriter(directory.path(), {}));
}

TEST_CASE("A flood of refusals rotates only the refusals' files, never a decision out") {
  const TempDirectory directory;
  WindowMetrics window;
  window.iterations = 5;
  window.workers.assign(2, {.gpu_type = "cpu", .batch_size = 64});
  {
    DecisionLogWriter log(directory.path(), {.max_bytes = 4000, .keep = 1});
    wire::LogRecord decided;
    *decided.mutable_report() = report_of(window, 0);
    log.append(decided);
    for (int i = 1; i < 200; ++i) {
      wire::LogRecord refused;
      *refused.mutable_report() = report_of(window, i);
      refused.set_refusal("report refused: a flood");
      log.append(refused);
    }
  }
  CHECK(read_decision_log_directory(directory.path()).records.size() == 1);
  CHECK(decision_log_files(directory.path()).size() == 1);
  CHECK(decision_log_files(directory.path(), kRefusalLogName).size() == 2);
}

TEST_CASE("Reports out of range are refused, naming the field and the range") {
  WindowMetrics window;
  window.iterations = 5;
  window.workers.assign(2, {.gpu_type = "cpu", .batch_size = 64, .compute_s = 0.1});
  const wire::WindowReport good = report_of(window, 0);
  const auto refusal = [](const wire::WindowReport& report) -> std::string {
    try {
      check_report(report, 2);
      return "";
    } catch (const ReportError& error) {
      return error.what();
    }
  };
  CHECK(refusal(good).empty());
  wire::WindowReport bad = good;
  bad.mutable_metrics()->set_validation_accuracy(1.5);
  CHECK(refusal(bad) == "metrics.validation_accuracy: expected a number in [0, 1], found 1.5");
  bad = good;
  bad.mutable_metrics()->set_progress(-0.1);
  CHECK(refusal(bad).starts_with("metrics.progress: expected a number in [0, 1]"));
  bad = good;
  bad.mutable_metrics()->mutable_workers(1)->set_memory_util(50);
  CHECK(refusal(bad) == "metrics.workers[1].memory_util: expected a number in [0, 1], found 50");
  bad = good;
  bad.mutable_metrics()->mutable_workers(0)->set_grad_var_norm(1e308);
  CHECK(refusal(bad).starts_with("metrics.workers[0].grad_var_norm: expected a number in [0, "));
  bad = good;
  bad.set_reference_batch(0.5);
  CHECK(refusal(bad).starts_with("reference_batch: expected a number in [1, "));
  bad = good;
  bad.set_lr_factor(0);
  CHECK(refusal(bad).starts_with("lr_factor: expected a number in (0, "));
  bad = good;
  bad.add_max_batches(64);
  CHECK(refusal(bad) == "max_batches: expected none or 2 entries, found 1");
}

TEST_CASE("A notice outside [0, 86400] s is refused, naming the worker's leaving_in_s") {
  WindowMetrics window;
  window.iterations = 5;
  window.workers.assign(4, {.gpu_type = "cpu", .batch_size = 64, .compute_s = 0.1});
  const wire::WindowReport good = report_of(window, 0);
  CHECK(leaving_in_s(good.metrics()).empty());
  for (const double seconds : {0.0, 30.0, kMaxNoticeSeconds}) {
    wire::WindowReport noticed = good;
    noticed.mutable_metrics()->mutable_workers(2)->set_leaving_in_s(seconds);
    CHECK(refusal(noticed) == "accepted");
  }
  const std::string expected = "metrics.workers[2].leaving_in_s: expected a number in [0, 86400]";
  for (const auto& [seconds, found] :
       {std::pair{-1.0, "-1"}, std::pair{86400.5, "86400.5"}, std::pair{1e300, "1e+300"},
        std::pair{std::numeric_limits<double>::quiet_NaN(), "nan"},
        std::pair{std::numeric_limits<double>::infinity(), "inf"}}) {
    wire::WindowReport bad = good;
    bad.mutable_metrics()->mutable_workers(2)->set_leaving_in_s(seconds);
    CHECK(refusal(bad) == expected + ", found " + found);
  }
}

TEST_CASE("Guard rails bound a decision's change of the global batch and of the LR factor") {
  CHECK(bound_global_change({400, 400}, 200, 2.0, {1000, 1000}) == std::vector<int>{200, 200});
  CHECK(bound_global_change({10, 10}, 200, 2.0, {1000, 1000}) == std::vector<int>{50, 50});
  CHECK(bound_global_change({10, 10}, 200, 2.0, {1000, 20}) == std::vector<int>{50, 20});
  CHECK(bound_global_change({150, 150}, 200, 2.0, {1000, 1000}) == std::vector<int>{150, 150});
  const GuardRails rails;
  CHECK(bound_lr_factor(8.0, 1.0, rails) == 2.0);
  CHECK(bound_lr_factor(0.1, 1.0, rails) == 0.5);
  CHECK(bound_lr_factor(100.0, 60.0, rails) == 64.0);
  CHECK_THROWS_AS(check_guard_rails({.max_batch_change = 0.5}), InputError);
  CHECK_THROWS_AS(check_guard_rails({.max_lr_factor = std::nan("")}), InputError);
}

namespace {

/// A 10-iteration window of two workers at 64 samples each.
WindowMetrics two_workers(double memory_util, double grad_var_norm) {
  WindowMetrics window;
  window.iterations = 10;
  window.iteration_s = 0.1;
  window.workers.assign(2, {.gpu_type = "cpu",
                            .batch_size = 64,
                            .compute_s = 0.05,
                            .memory_util = memory_util,
                            .samples_per_s = 1280,
                            .grad_std_norm = 1,
                            .grad_var_norm = grad_var_norm});
  return window;
}

}  // namespace

TEST_CASE("The arbitrator holds a policy's decision to the guard rails and declared batches") {
  const TempDirectory directory;
  const std::filesystem::path file = write_policy(directory, ActionBase::kBalanced);
  const Arbitrator arbitrator(file, {.workers = 2});
  wire::WindowReport report = report_of(two_workers(0, 1), 4);
  report.set_reference_batch(1);  // a careless report: linear LR would be x128
  report.set_lr_factor(3);
  report.add_max_batches(40);
  report.add_max_batches(0);
  wire::LogRecord record;
  arbitrator.decide(report, record);
  const wire::Decision& decision = record.decision();
  CHECK(decision.batches(0) <= 40);
  CHECK(decision.global_batch() >= 64);
  CHECK(decision.global_batch() <= 256);
  CHECK(decision.lr_factor() == 6.0);  // the report's 3, at most doubled
  CHECK(decision.apply_at_iteration() == report.iteration() + 10);  // one window of lag
  CHECK(record.guard_rails().max_lr_change() == 2.0);
}

TEST_CASE("A pinned policy is loaded only when its bytes have the pinned SHA-256") {
  const TempDirectory directory;
  const std::filesystem::path file = write_policy(directory, ActionBase::kBalanced);
  std::ostringstream bytes;
  bytes << std::ifstream(file, std::ios::binary).rdbuf();
  const std::string digest = sha256_of(bytes.str());
  std::string upper = digest;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  CHECK(Arbitrator(file, {.workers = 2, .policy_sha256 = upper}).identity().sha256() == digest);
  std::string other = digest;
  other[0] = other[0] == '0' ? '1' : '0';
  CHECK_THROWS_AS(Arbitrator(file, {.workers = 2, .policy_sha256 = other}), PolicyFileError);
  CHECK_THROWS_AS(Arbitrator(file, {.workers = 2, .policy_sha256 = "abc"}), InputError);
}

TEST_CASE("A served rule decides from the report, starts its episode once, and logs its spec") {
  wire::WindowReport report = report_of(two_workers(0.3, 4), 0);
  report.add_max_batches(100);
  report.add_max_batches(0);
  const Arbitrator arbitrator(make_baseline("static:512", 1, "test"), "static:512",
                              {.workers = 2, .guard_rails = kUnbounded});
  CHECK(arbitrator.policy() == nullptr);
  CHECK(arbitrator.actions() == 0);
  wire::LogRecord record;
  arbitrator.decide(report, record);
  CHECK(record.episode_start());
  CHECK(record.decision().policy().spec() == "static:512");
  CHECK(record.logits().empty());
  CHECK(record.decision().batches(0) == 100);  // declared
  CHECK(record.decision().batches(1) == 192);  // memory: 64 * 0.9 / 0.3
  arbitrator.decide(report, record);
  CHECK_FALSE(record.episode_start());
  arbitrator.begin_next_episode();
  arbitrator.decide(report, record);
  CHECK(record.episode_start());
  CHECK_THROWS_AS(Arbitrator(make_baseline("goodput", 1, "test"), "goodput",
                             {.workers = 2, .policy_sha256 = std::string(64, 'a')}),
                  InputError);
}

namespace {

/// A window of four workers at 128 samples each, the third at half the others' speed: 10
/// iterations of 0.5 s.
WindowMetrics four_workers() {
  WindowMetrics window;
  window.iterations = 10;
  window.iteration_s = 0.5;
  for (int w = 0; w < 4; ++w) {
    const double speed = w == 2 ? 320 : 640;
    window.workers.push_back({.gpu_type = "cpu",
                              .batch_size = 128,
                              .compute_s = 128 / speed,
                              .samples_per_s = speed,
                              .grad_std_norm = std::sqrt(8.0),
                              .grad_var_norm = 8.0});
  }
  return window;
}

std::vector<int> decided_batches(const Arbitrator& arbitrator, const wire::WindowReport& report) {
  wire::LogRecord record;
  arbitrator.decide(report, record);
  return {record.decision().batches().begin(), record.decision().batches().end()};
}

}  // namespace

TEST_CASE(
    "A served goodput-notice gives a departing worker's share to the survivors, as the "
    "simulator's rule does on the same context") {
  const ArbitratorOptions options{.workers = 4, .guard_rails = kUnbounded};
  const Arbitrator notice(make_baseline("goodput-notice:100", 1, "test"), "goodput-notice:100",
                          options);
  const Arbitrator goodput(make_baseline("goodput:100", 1, "test"), "goodput:100", options);
  wire::WindowReport report = report_of(four_workers(), 3);
  const std::vector<int> calm = decided_batches(notice, report);
  CHECK(calm == decided_batches(goodput, report));

  // Decided one window late, on windows of 10 iterations of 0.5 s: a worker leaving in 7 s is
  // gone before the decision after this one applies, 10 s from now.
  report.mutable_metrics()->mutable_workers(1)->set_leaving_in_s(7);
  wire::LogRecord record;
  Arbitrator::Trace trace;
  notice.decide(report, record, trace);
  const std::vector<int> noticed(record.decision().batches().begin(),
                                 record.decision().batches().end());
  EnvOptions served = evaluation_env_options();
  served.decision_lag = 1;
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> leaving = {inf, 7, inf, inf};
  const std::vector<int> reported(4, 128);
  const std::vector<int> caps(4, served.max_batch);
  const DecisionContext context{.options = served,
                                .window = trace.window,
                                .batches = reported,
                                .max_batches = caps,
                                .reference_batch = report.reference_batch(),
                                .epochs = report.metrics().epochs(),
                                .leaving_in_s = leaving};
  CHECK(noticed == NoticeGoodputPolicy(100).decide(context, trace.observation));
  CHECK(noticed[1] == served.min_batch);
  CHECK(noticed[0] + noticed[2] + noticed[3] > calm[0] + calm[2] + calm[3]);
  CHECK(noticed[0] > noticed[2]);  // split by speed

  // A departure after the next decision applies leaves this one to goodput:100.
  report.mutable_metrics()->mutable_workers(1)->set_leaving_in_s(12);
  CHECK(decided_batches(notice, report) == calm);
}

TEST_CASE("A served rule-base policy decides as the rule its actions pick, report after report") {
  const TempDirectory directory;
  const ArbitratorOptions options{.workers = 4, .guard_rails = kUnbounded};
  for (const std::string_view name : {"goodput+straggler", "proportional", "goodput-steady:100"}) {
    CAPTURE(name);
    const ObservationBuilder builder;
    const EnvOptions env = evaluation_env_options();
    const PolicySnapshot untrained =
        untrained_snapshot({.schema_json = builder.schema().to_json(),
                            .actions = default_actions(ActionBase::kRule),
                            .action_base = ActionBase::kRule,
                            .min_batch = env.min_batch,
                            .max_batch = env.max_batch,
                            .decision_interval = env.decision_interval},
                           builder.schema().features_per_worker(), 5);
    const std::filesystem::path file = directory / (std::string(name) + ".pt");
    save_torchscript_policy(
        constant_action_snapshot(untrained, static_cast<std::size_t>(*selectable_rule(name))),
        file);
    const Arbitrator policy(file, options);
    const Arbitrator rule(make_baseline(std::string(name), 1, "test"), std::string(name), options);
    // The third worker slows down, then recovers: the rules' fits must follow every report.
    for (int index = 0; index < 6; ++index) {
      WindowMetrics window = four_workers();
      const double slowdown = index >= 2 && index < 4 ? 3 : 1;
      window.workers[2].samples_per_s /= slowdown;
      window.workers[2].compute_s *= slowdown;
      const wire::WindowReport report = report_of(window, index);
      CHECK(decided_batches(policy, report) == decided_batches(rule, report));
    }
  }
}

TEST_CASE("A served gns grows every batch by a quarter of the largest default action") {
  // B_noise = 8 * 128 = 1,024 is above the global batch of 512, so gns grows it; with no action
  // set given it takes the base's defaults, as the environment does (largest +100: +25 each).
  const Arbitrator gns(make_baseline("gns", 1, "test"), "gns",
                       {.workers = 4, .guard_rails = kUnbounded}, evaluation_env_options());
  CHECK(decided_batches(gns, report_of(four_workers(), 3)) == std::vector<int>(4, 153));
}

TEST_CASE("The gate's frame scanner finds every HTTP/2 frame header, however the bytes arrive") {
  std::vector<std::uint8_t> bytes(FrameScanner::kPrefaceBytes, 'P');
  const auto frame = [&](std::uint32_t length, std::uint8_t type, std::uint8_t flags,
                         std::uint32_t stream) {
    for (const int shift : {16, 8, 0}) bytes.push_back(static_cast<std::uint8_t>(length >> shift));
    bytes.push_back(type);
    bytes.push_back(flags);
    for (const int shift : {24, 16, 8, 0})
      bytes.push_back(static_cast<std::uint8_t>(stream >> shift));
    bytes.insert(bytes.end(), length, 0x01);  // a payload that looks like frame headers
  };
  frame(0, 0x4, 0, 0);
  frame(20, 0x1, 0x4, 1);
  frame(70000, 0x0, 0x1, 1);
  frame(4, 0x3, 0, 3);
  for (const std::size_t chunk : {std::size_t{1}, std::size_t{7}, bytes.size()}) {
    CAPTURE(chunk);
    FrameScanner scanner(true);
    std::vector<FrameScanner::Frame> frames;
    for (std::size_t at = 0; at < bytes.size(); at += chunk) {
      scanner.feed(bytes.data() + at, std::min(chunk, bytes.size() - at),
                   [&](const FrameScanner::Frame& found) { frames.push_back(found); });
    }
    REQUIRE(frames.size() == 4);
    CHECK((frames[1].type == 0x1 && frames[1].flags == 0x4 && frames[1].stream == 1));
    CHECK((frames[2].type == 0x0 && frames[2].flags == 0x1 && frames[2].stream == 1));
    CHECK((frames[3].type == 0x3 && frames[3].stream == 3));
  }
}

}  // namespace dynamix
