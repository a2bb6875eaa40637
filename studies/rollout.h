// The hindsight rollout: per seed, a policy's actions (percentages of the goodput-optimal batch,
// or which rule decides: the rule action base) chosen block by block by a search that knows the
// seed's whole future, a bound on what such decisions can gain over the rule they start from
// (docs/dynamic.md).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "gym/action_base.h"
#include "gym/batch_size_env.h"

namespace dynamix {

/// goodput:R's percentage that is goodput:100, the base every candidate continues with.
inline constexpr int kRolloutBasePercent = 100;

struct RolloutOptions {
  /// The percentages of the goodput-optimal global batch a decision may choose: the goodput
  /// action base's own set, the learned policy's actions.
  std::vector<int> percents = default_actions(ActionBase::kGoodput);
  /// When not empty, the search picks among these rules (numbers of gym/rules.h's
  /// kSelectableRules) instead of percentages, and every candidate continues with `base_rule`
  /// (a number of that table) instead of goodput:100.
  std::vector<int> rules = {};
  int base_rule = 0;
  /// Consecutive decisions one choice holds: 1 decides every window alone, a longer block also
  /// finds changes that pay only when sustained (a greedy search over single windows does not).
  int block = 5;
  /// Episodes run at once (threads); results do not depend on it.
  int jobs = 1;
  /// Set on every episode's environment (e.g. to stop on an interrupt by throwing).
  IterationObserver observer;
};

/// One seed's search.
struct RolloutOutcome {
  std::uint64_t seed = 0;
  /// The base's time to target on the seed (goodput:100's, or the base rule's), and the searched
  /// sequence's; none if missed.
  std::optional<double> base_time_s;
  std::optional<double> time_s;
  /// The percentage (or rule number) chosen at each decision up to the last one that left the
  /// base (every later one is the base).
  std::vector<int> choices;
  /// Decisions the searched sequence's episode took, and episodes the search ran.
  int decisions = 0;
  int episodes = 0;
};

/// For each seed: starting from the base (goodput:100, or options.base_rule) throughout, at each
/// block of `options.block` decisions in turn, every other percentage (or rule) is tried for the
/// block, followed by the base to the end of the episode, and the one that reaches the target
/// soonest is kept (ties keep the earlier choice). Each candidate is an exact replay of the seed,
/// so the search knows its stragglers, co-located jobs and preemptions; the result is never slower
/// than the base on the seed (the base's own continuation is always a candidate: Bertsekas'
/// rollout). Starts every worker at `env_options.initial_batch`; stop_at_target is forced on.
/// `progress(seed, episodes)` names the seed in search (1-based) and the episodes run so far.
/// Deterministic whatever `jobs`.
std::vector<RolloutOutcome> hindsight_rollout(const std::shared_ptr<const Scenario>& scenario,
                                              const EnvOptions& env_options,
                                              std::uint64_t first_seed, int seeds,
                                              const RolloutOptions& options,
                                              const std::function<void(int, int)>& progress = {});

}  // namespace dynamix
