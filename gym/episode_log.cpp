// Decision logs and the rollout policies of `dynamix simulate --policy`.
#include "gym/episode_log.h"

#include <charconv>
#include <numeric>
#include <ostream>

#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"

namespace dynamix {

void DecisionLog::record(const StepResult& step, std::span<const int> actions) {
  const std::size_t p = step.rewards.size();
  ++decisions_;
  for (std::size_t w = 0; w < p; ++w) {
    DecisionRow& row = rows_.emplace_back();
    row.decision = step.info.decision;
    row.iteration = step.info.iteration;
    row.time_s = step.info.time_s;
    row.worker = w;
    row.batch_size = step.info.batches[w];
    if (!actions.empty()) row.action = actions[w];
    row.reward = step.rewards[w];
  }
  if (p > 0) {
    episode_return_ +=
        std::accumulate(step.rewards.begin(), step.rewards.end(), 0.0) / static_cast<double>(p);
  }
}

void DecisionLog::write_csv(std::ostream& out) const {
  out << "decision,iteration,time_s,worker,batch_size,action,reward\n";
  for (const DecisionRow& row : rows_) {
    out << row.decision << ',' << row.iteration << ',' << format_number(row.time_s) << ','
        << row.worker << ',' << row.batch_size << ',';
    if (row.action) out << *row.action;
    out << ',' << format_number(row.reward) << '\n';
  }
}

RolloutPolicy::RolloutPolicy(int static_batch, std::uint64_t seed)
    : static_batch_(static_batch), rng_(seed, stream_id("random-policy")) {}

RolloutPolicy RolloutPolicy::parse(const std::string& spec, std::uint64_t seed,
                                   const std::string& option) {
  if (spec == "random") return RolloutPolicy(0, seed);
  constexpr std::string_view kStatic = "static:";
  if (spec.starts_with(kStatic)) {
    const char* begin = spec.data() + kStatic.size();
    const char* end = spec.data() + spec.size();
    int batch = 0;
    const auto result = std::from_chars(begin, end, batch);
    if (result.ec == std::errc() && result.ptr == end && batch >= 1) {
      return RolloutPolicy(batch, seed);
    }
  }
  throw InputError(option, 0, "", "static:B with B >= 1 samples, or random", "'" + spec + "'");
}

std::string RolloutPolicy::description() const {
  return static_batch_ > 0 ? "static:" + std::to_string(static_batch_) : "random";
}

ResetOptions RolloutPolicy::reset_options() const { return {.initial_batch = static_batch_}; }

void RolloutPolicy::act(BatchSizeEnv& env, StepResult& out, DecisionLog& log) {
  choice_.resize(env.workers());
  if (static_batch_ > 0) {
    std::fill(choice_.begin(), choice_.end(), static_batch_);
    env.step_batches(choice_, out);
    log.record(out, {});
    return;
  }
  for (int& action : choice_) action = static_cast<int>(rng_.below(env.options().actions.size()));
  env.step(choice_, out);
  log.record(out, choice_);
}

EpisodeSummary run_episode(BatchSizeEnv& env, RolloutPolicy& policy, std::uint64_t seed,
                           DecisionLog& log) {
  env.reset(seed, policy.reset_options());
  StepResult step;
  EpisodeSummary summary;
  while (!env.episode_over()) {
    policy.act(env, step, log);
    summary.terminated = step.terminated;
    summary.truncated = step.truncated;
  }
  summary.episode_return = log.episode_return();
  summary.decisions = log.decisions();
  return summary;
}

}  // namespace dynamix
