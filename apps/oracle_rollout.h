// `dynamix oracle --rollout`: the hindsight rollout from goodput:100 (or, with --rollout-rules,
// over which rule decides each block) per scenario and seed, as rollout.csv and summary.md.
#pragma once

#include <memory>
#include <ostream>
#include <vector>

#include "apps/oracle_options.h"
#include "gym/batch_size_env.h"
#include "sim/scenario/scenario.h"

namespace dynamix {

/// --rollout: per scenario and seed, goodput:100's time to target and the rollout's from it, the
/// decisions it changed.
void write_rollouts(const OracleArgs& a,
                    const std::vector<std::shared_ptr<const Scenario>>& scenarios,
                    const IterationObserver& observer, std::ostream& csv, std::ostream& markdown);

/// --rollout --rollout-rules: per scenario, the rules alone, then the rollout over which rule
/// decides each block, from the per-scenario best rule; the headroom over it and over the best
/// single rule across the scenarios.
void write_rule_rollouts(const OracleArgs& a,
                         const std::vector<std::shared_ptr<const Scenario>>& scenarios,
                         const IterationObserver& observer, std::ostream& csv,
                         std::ostream& markdown);

}  // namespace dynamix
