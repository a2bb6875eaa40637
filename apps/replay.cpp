// `dynamix replay`: batches must match exactly, logits within 1e-5; near ties are reported.
#include "apps/replay.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>

#include "adapter/server/arbitrator.h"
#include "adapter/server/decision_log.h"
#include "apps/knob_options.h"
#include "apps/serve.h"
#include "apps/serve_options.h"
#include "sim/io/input_error.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;

constexpr double kLogitTolerance = 1e-5;
constexpr double kNearTie = 1e-4;

template <typename Values>
std::string listed(const Values& values) {
  std::ostringstream text;
  text << '[';
  for (auto it = values.begin(); it != values.end(); ++it) {
    text << (it == values.begin() ? "" : ", ") << *it;
  }
  return text.str() + ']';
}

/// Gap between the two largest logits of one worker's row.
double top_two_gap(std::span<const float> row) {
  std::vector<float> sorted(row.begin(), row.end());
  std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
  return sorted[0] - sorted[1];
}

std::string policy_label(const wire::PolicyIdentity& identity) {
  return identity.has_spec() ? "'" + identity.spec() + "'" : "sha256 " + identity.sha256();
}

struct Comparison {
  /// What differs, empty when the decision matches.
  std::string difference;
  double max_logit_difference = 0;
  int near_ties = 0;
};

Comparison compare(const wire::LogRecord& logged, const wire::LogRecord& replayed,
                   std::size_t actions) {
  Comparison result;
  const wire::Decision& was = logged.decision();
  const wire::Decision& now = replayed.decision();
  if (was.policy().sha256() != now.policy().sha256() ||
      was.policy().spec() != now.policy().spec()) {
    result.difference = "policy: logged " + policy_label(was.policy()) + ", replayed with " +
                        policy_label(now.policy());
    return result;
  }
  if (logged.logits_size() != replayed.logits_size()) {
    result.difference = "logits: logged " + std::to_string(logged.logits_size()) +
                        " values, replayed " + std::to_string(replayed.logits_size());
    return result;
  }
  for (int i = 0; i < logged.logits_size(); ++i) {
    result.max_logit_difference =
        std::max(result.max_logit_difference,
                 static_cast<double>(std::abs(logged.logits(i) - replayed.logits(i))));
  }
  if (result.max_logit_difference > kLogitTolerance) {
    std::ostringstream text;
    text << "logits differ by up to " << result.max_logit_difference << " (tolerance "
         << kLogitTolerance << ")";
    result.difference = text.str();
    return result;
  }
  bool all_differences_tied = true;
  for (int w = 0; w < now.batches_size(); ++w) {
    const std::span<const float> row(replayed.logits().data() + w * actions, actions);
    const bool tied = actions >= 2 && top_two_gap(row) < kNearTie;
    result.near_ties += tied;
    if (w >= was.batches_size() || was.batches(w) != now.batches(w)) {
      all_differences_tied = all_differences_tied && tied;
    }
  }
  const bool batches_equal =
      was.batches_size() == now.batches_size() &&
      std::equal(was.batches().begin(), was.batches().end(), now.batches().begin());
  if (!batches_equal && !all_differences_tied) {
    result.difference =
        "batches: logged " + listed(was.batches()) + ", replayed " + listed(now.batches());
  } else if (batches_equal && (was.global_batch() != now.global_batch() ||
                               was.apply_at_iteration() != now.apply_at_iteration() ||
                               was.lr_factor() != now.lr_factor())) {
    std::ostringstream text;
    text.precision(17);
    text << "global_batch, apply_at_iteration, lr_factor: logged " << was.global_batch() << ", "
         << was.apply_at_iteration() << ", " << was.lr_factor() << "; replayed "
         << now.global_batch() << ", " << now.apply_at_iteration() << ", " << now.lr_factor();
    result.difference = text.str();
  }
  return result;
}

void print_trace(std::ostream& out, const wire::LogRecord& record, const Arbitrator::Trace& trace,
                 std::size_t actions) {
  const wire::WindowReport& report = record.report();
  out << "window " << report.window_index() << " of job '" << report.job_id() << "' at iteration "
      << report.iteration()
      << ":\n  report (per worker: batch_size, compute_s, comm_s, wait_s, "
         "samples_per_s, grad_var_norm):\n";
  for (const WorkerWindow& worker : trace.window.workers) {
    out << "    " << worker.batch_size << ", " << worker.compute_s << ", " << worker.comm_s << ", "
        << worker.wait_s << ", " << worker.samples_per_s << ", " << worker.grad_var_norm << '\n';
  }
  out << "  observation (ObservationBuilder, " << trace.observation.features
      << " features per worker):\n";
  for (std::size_t w = 0; w < trace.observation.workers; ++w) {
    const float* row = trace.observation.row(w);
    out << "    " << listed(std::span<const float>(row, trace.observation.features)) << '\n';
  }
  out << "  logits -> action:\n";
  for (std::size_t w = 0; w < trace.greedy.actions.size(); ++w) {
    out << "    "
        << listed(std::span<const float>(trace.greedy.logits.data() + w * actions, actions))
        << " -> " << trace.greedy.actions[w] << '\n';
  }
  const wire::Decision& decision = record.decision();
  out << "  batches " << listed(decision.batches()) << ", global " << decision.global_batch()
      << ", lr factor " << decision.lr_factor() << ", from iteration "
      << decision.apply_at_iteration() << '\n';
}

/// Decides `record`'s report again, with its guard rails and episode start, and compares.
Comparison replay_record(const Arbitrator& arbitrator, const wire::LogRecord& record,
                         wire::LogRecord& replayed, Arbitrator::Trace& trace) {
  if (record.episode_start()) arbitrator.begin_next_episode();
  const GuardRails rails =
      record.has_guard_rails() ? from_wire(record.guard_rails()) : GuardRails{};
  try {
    arbitrator.decide(record.report(), replayed, trace, &rails);
  } catch (const ReportError& error) {
    return {std::string("the report is now refused: ") + error.what()};
  }
  return compare(record, replayed, arbitrator.actions());
}

/// What replay was asked to do.
/// Replays every decision of the log; 0 when all match, 1 at the first that differs.
int replay_log(const ReplayOptions& o) {
  const DecisionLog log = read_decision_log_directory(o.log_directory);
  std::unique_ptr<const Arbitrator> arbitrator;
  int decisions = 0, near_ties = 0;
  double max_difference = 0;
  wire::LogRecord replayed;
  Arbitrator::Trace trace;
  // One job, its windows in order, within each serve's run (a logged episode start).
  JobSequence sequence;
  // Refusals are logged apart (refusals.jsonl); a log older than the split has them inline.
  std::uint64_t refusals = count_decision_log_records(o.log_directory, kRefusalLogName);
  for (const wire::LogRecord& record : log.records) {
    if (!record.refusal().empty()) {
      ++refusals;
      continue;
    }
    const std::int64_t window = record.report().window_index();
    if (record.episode_start()) sequence.restart();
    try {
      sequence.check(record.report());
    } catch (const SequenceError& error) {
      std::cout << "replay: window " << window << " of job " << excerpt(record.report().job_id())
                << " was decided, though " << error.what() << '\n';
      return 1;
    }
    sequence.decided(record.report());
    const auto workers = static_cast<std::size_t>(record.report().metrics().workers_size());
    if (!arbitrator || arbitrator->workers() != workers) {
      arbitrator = make_arbitrator(o.policy, {.workers = workers,
                                              .policy_sha256 = o.policy_sha256,
                                              .trust_policy_code = o.trust_policy_code});
    }
    const Comparison comparison = replay_record(*arbitrator, record, replayed, trace);
    if (o.show_window && window == *o.show_window)
      print_trace(std::cout, replayed, trace, arbitrator->actions());
    if (!comparison.difference.empty()) {
      std::cout << "replay: window " << window << " (iteration " << record.report().iteration()
                << ") of job '" << record.report().job_id()
                << "' differs: " << comparison.difference << '\n';
      return 1;
    }
    ++decisions;
    near_ties += comparison.near_ties;
    max_difference = std::max(max_difference, comparison.max_logit_difference);
  }
  std::cout << "replay: " << decisions << " decisions match (batches exactly, logits within "
            << max_difference << "), " << near_ties << " near ties (top-two gap < " << kNearTie
            << "), " << refusals << " refused reports skipped"
            << (log.truncated_tail ? ", 1 record cut short by a kill ignored" : "") << '\n';
  return 0;
}

}  // namespace

int run_replay(const std::vector<std::string>& args) {
  ReplayOptions o;
  if (parse_knob_command_line(args, replay_knobs(), o)) return 0;
  return replay_log(o);
}

}  // namespace dynamix
