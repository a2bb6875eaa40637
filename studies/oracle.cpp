// Schedule search: screen on one seed, confirm the finalists on every seed, extend the best
// two-phase schedules to three phases, confirm again.
#include "studies/oracle.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

#include "studies/evaluation.h"

namespace dynamix {

void parallel_for(int count, int jobs, const std::function<void(int)>& work) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(std::max(count, 0)));
  std::atomic<int> next{0};
  const auto worker = [&] {
    for (int i = next++; i < count; i = next++) {
      try {
        work(i);
      } catch (...) {
        errors[static_cast<std::size_t>(i)] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < std::min(jobs, count); ++t) threads.emplace_back(worker);
  worker();
  for (std::thread& thread : threads) thread.join();
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

namespace {

using Phases = std::vector<SchedulePolicy::Phase>;

class Search {
 public:
  Search(const std::shared_ptr<const Scenario>& scenario, EnvOptions env_options,
         std::uint64_t first_seed, int seeds, const OracleOptions& options,
         const std::function<void(int, int)>& progress)
      : scenario_(scenario),
        env_options_(std::move(env_options)),
        first_seed_(first_seed),
        seeds_(seeds),
        options_(options),
        progress_(progress) {
    env_options_.stop_at_target = true;
    for (int level : options.levels) {
      if (level >= env_options_.min_batch && level <= env_options_.max_batch)
        levels_.push_back(level);
    }
  }

  OracleResult run();

 private:
  /// Runs each schedule on `seeds` seeds (from the first) and returns their outcomes.
  std::vector<ScheduleOutcome> evaluate(const std::vector<Phases>& schedules, int seeds);
  /// The `count` fastest of `outcomes` (reached on every seed they ran, then time).
  static std::vector<ScheduleOutcome> fastest(std::vector<ScheduleOutcome> outcomes,
                                              std::size_t count);
  std::vector<ScheduleOutcome> screen_and_confirm(const std::vector<Phases>& schedules);
  /// An upper bound on the episodes the whole search runs, for progress.
  int planned() const {
    const int levels = static_cast<int>(levels_.size());
    const int switches = static_cast<int>(options_.switch_fractions.size());
    return levels + levels * (levels - 1) / 2 * switches + options_.finalists * levels * switches +
           3 * options_.finalists * seeds_;
  }

  std::shared_ptr<const Scenario> scenario_;
  EnvOptions env_options_;
  std::uint64_t first_seed_;
  int seeds_;
  OracleOptions options_;
  std::function<void(int, int)> progress_;
  std::vector<int> levels_;
  OracleResult result_;
  int done_ = 0;
};

std::vector<ScheduleOutcome> Search::evaluate(const std::vector<Phases>& schedules, int seeds) {
  const int count = static_cast<int>(schedules.size()) * seeds;
  std::vector<EpisodeResult> episodes(static_cast<std::size_t>(count));
  parallel_for(count, options_.jobs, [&](int i) {
    BatchSizeEnv env(std::make_shared<FixedScenario>(scenario_), env_options_);
    env.set_iteration_observer(options_.observer);
    SchedulePolicy policy(schedules[static_cast<std::size_t>(i / seeds)], options_.hindsight);
    episodes[static_cast<std::size_t>(i)] =
        run_episode(env, policy, first_seed_ + static_cast<std::uint64_t>(i % seeds));
  });
  done_ += count;
  if (progress_) progress_(done_, std::max(done_, planned()));
  std::vector<ScheduleOutcome> outcomes;
  for (std::size_t s = 0; s < schedules.size(); ++s) {
    ScheduleOutcome outcome;
    outcome.phases = schedules[s];
    outcome.name = SchedulePolicy(schedules[s], options_.hindsight).name();
    outcome.seeds = seeds;
    double time = 0;
    for (int k = 0; k < seeds; ++k) {
      const EpisodeResult& episode =
          episodes[s * static_cast<std::size_t>(seeds) + static_cast<std::size_t>(k)];
      if (!episode.time_to_target_s) continue;
      ++outcome.reached;
      time += *episode.time_to_target_s;
      outcome.mean_epochs += episode.epochs;
    }
    outcome.mean_time_s =
        outcome.reached == seeds ? time / seeds : std::numeric_limits<double>::infinity();
    if (outcome.reached > 0) outcome.mean_epochs /= outcome.reached;
    result_.tried.push_back(outcome);
    outcomes.push_back(std::move(outcome));
  }
  return outcomes;
}

std::vector<ScheduleOutcome> Search::fastest(std::vector<ScheduleOutcome> outcomes,
                                             std::size_t count) {
  std::stable_sort(outcomes.begin(), outcomes.end(),
                   [](const ScheduleOutcome& a, const ScheduleOutcome& b) {
                     return a.mean_time_s < b.mean_time_s;
                   });
  while (!outcomes.empty() && !std::isfinite(outcomes.back().mean_time_s)) outcomes.pop_back();
  if (outcomes.size() > count) outcomes.resize(count);
  return outcomes;
}

std::vector<ScheduleOutcome> Search::screen_and_confirm(const std::vector<Phases>& schedules) {
  std::vector<Phases> finalists;
  for (const ScheduleOutcome& outcome :
       fastest(evaluate(schedules, 1), static_cast<std::size_t>(options_.finalists))) {
    finalists.push_back(outcome.phases);
  }
  std::vector<ScheduleOutcome> confirmed = fastest(evaluate(finalists, seeds_), finalists.size());
  for (const ScheduleOutcome& outcome : confirmed) {
    if (!result_.best || outcome.mean_time_s < result_.best->mean_time_s) result_.best = outcome;
  }
  return confirmed;
}

OracleResult Search::run() {
  std::vector<Phases> one_phase;
  for (int level : levels_) one_phase.push_back({{0, level}});
  const std::vector<ScheduleOutcome> constant = screen_and_confirm(one_phase);
  if (constant.empty()) return result_;
  std::vector<double> switches;
  for (double fraction : options_.switch_fractions) {
    // Tenths of an epoch: schedules people can read and write back.
    switches.push_back(std::round(10 * fraction * constant.front().mean_epochs) / 10);
  }
  std::vector<Phases> two_phase;
  for (std::size_t a = 0; a < levels_.size(); ++a) {
    for (std::size_t b = a + 1; b < levels_.size(); ++b) {
      for (double at : switches) two_phase.push_back({{0, levels_[a]}, {at, levels_[b]}});
    }
  }
  std::vector<Phases> three_phase;
  for (const ScheduleOutcome& leader : screen_and_confirm(two_phase)) {
    if (leader.phases.size() != 2) continue;
    for (int level : levels_) {
      if (level <= leader.phases[1].per_worker) continue;
      for (double at : switches) {
        if (at > leader.phases[1].from_epoch)
          three_phase.push_back({leader.phases[0], leader.phases[1], {at, level}});
      }
    }
  }
  screen_and_confirm(three_phase);
  return result_;
}

}  // namespace

OracleResult search_schedules(const std::shared_ptr<const Scenario>& scenario,
                              const EnvOptions& env_options, std::uint64_t first_seed, int seeds,
                              const OracleOptions& options,
                              const std::function<void(int, int)>& progress) {
  return Search(scenario, env_options, first_seed, seeds, options, progress).run();
}

}  // namespace dynamix
