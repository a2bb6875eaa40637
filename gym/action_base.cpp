// Action bases: the current batch, the speed-balanced split, or the global batch.
#include "gym/action_base.h"

#include <algorithm>
#include <cmath>

#include "gym/rules.h"
#include "sim/core/check.h"

namespace dynamix {
namespace {

/// The samples per second of every worker in `window`, or false when one lacks a measurement.
bool speeds_known(const WindowMetrics& window, std::size_t workers, double& speed_sum) {
  if (window.workers.size() != workers) return false;
  speed_sum = 0;
  for (const WorkerWindow& worker : window.workers) {
    const double speed = worker.samples_per_s;
    if (!(speed > 0) || !std::isfinite(speed)) return false;
    speed_sum += speed;
  }
  return true;
}

}  // namespace

std::string_view action_base_name(ActionBase base) {
  switch (base) {
    case ActionBase::kBalanced:
      return "balanced";
    case ActionBase::kGlobal:
      return "global";
    case ActionBase::kNoise:
      return "noise";
    case ActionBase::kGoodput:
      return "goodput";
    case ActionBase::kGoodputSteady:
      return "goodput-steady";
    case ActionBase::kRule:
      return "rule";
    case ActionBase::kCurrent:
      break;
  }
  return "current";
}

std::optional<ActionBase> parse_action_base(std::string_view name) {
  for (ActionBase base : kActionBases) {
    if (name == action_base_name(base)) return base;
  }
  return std::nullopt;
}

std::string action_base_names() {
  std::string names;
  for (ActionBase base : kActionBases) {
    if (!names.empty()) names += ", ";
    names += action_base_name(base);
  }
  return names;
}

std::vector<int> default_actions(ActionBase base) {
  if (base == ActionBase::kRule) {
    std::vector<int> rules(kSelectableRules.size());
    for (std::size_t i = 0; i < rules.size(); ++i) rules[i] = static_cast<int>(i);
    return rules;
  }
  if (base == ActionBase::kGlobal) return {-50, -20, 0, 25, 100};
  if (base == ActionBase::kNoise) return {100, 200, 400, 800, 1600};
  if (anchors_on_goodput(base)) return {50, 71, 100, 141, 200};
  return {-100, -25, 0, 25, 100};
}

std::string action_rule(ActionBase base) {
  if (base == ActionBase::kRule) {
    std::string rules;
    for (std::size_t i = 0; i < kSelectableRules.size(); ++i) {
      rules += (i == 0 ? "" : ", ") + std::to_string(i) + " " + std::string(kSelectableRules[i]);
    }
    return "numbers of selectable rules (" + rules + ")";
  }
  if (base == ActionBase::kGlobal) return "changes above -100 (percent of the global batch)";
  if (base == ActionBase::kNoise) return "percentages of the noise scale above 0";
  if (anchors_on_goodput(base)) return "percentages of the goodput-optimal batch above 0";
  return "";
}

std::optional<int> invalid_action(ActionBase base, std::span<const int> actions) {
  if (base == ActionBase::kRule) {
    for (int action : actions) {
      if (action < 0 || static_cast<std::size_t>(action) >= kSelectableRules.size()) return action;
    }
    return std::nullopt;
  }
  if (!shares_one_action(base)) return std::nullopt;
  const int floor = base == ActionBase::kGlobal ? -100 : 0;
  for (int action : actions) {
    if (action <= floor) return action;
  }
  return std::nullopt;
}

std::optional<std::size_t> neutral_action(ActionBase base, std::span<const int> actions) {
  if (base == ActionBase::kRule) {
    return actions.empty() ? std::nullopt : std::optional<std::size_t>(0);
  }
  if (anchors_on_goodput(base)) {
    // 100% of the optimum where the set has it, else its middle.
    const auto hundred = std::find(actions.begin(), actions.end(), 100);
    if (hundred != actions.end()) return static_cast<std::size_t>(hundred - actions.begin());
  }
  if (has_anchor(base)) {
    return actions.empty() ? std::nullopt : std::optional(actions.size() / 2);
  }
  for (std::size_t i = 0; i < actions.size(); ++i) {
    if (actions[i] == 0) return i;
  }
  return std::nullopt;
}

void requested_batches(ActionBase base, std::span<const int> actions, const WindowMetrics& window,
                       std::span<const int> current, std::span<const int> chosen,
                       std::vector<long long>& out) {
  DYNAMIX_CHECK(chosen.size() == current.size(),
                chosen.size() << " actions for " << current.size() << " workers");
  DYNAMIX_CHECK(base != ActionBase::kRule, "the rule base decides through a RuleBook");
  const std::size_t p = current.size();
  out.assign(current.begin(), current.end());
  double speed_sum = 0;
  const bool balanced = base != ActionBase::kCurrent && speeds_known(window, p, speed_sum);
  double global = 0;
  for (int b : current) global += b;
  const auto share = [&](std::size_t w) {
    return balanced ? global * window.workers[w].samples_per_s / speed_sum
                    : static_cast<double>(current[w]);
  };
  if (base == ActionBase::kCurrent || base == ActionBase::kBalanced) {
    for (std::size_t w = 0; w < p; ++w) {
      out[w] = std::llround(share(w)) + actions[static_cast<std::size_t>(chosen[w])];
    }
    return;
  }
  // The global, noise and goodput bases: the workers' choices meet in their geometric mean.
  double log_factor = 0;
  for (std::size_t w = 0; w < p; ++w) {
    const int action = actions[static_cast<std::size_t>(chosen[w])];
    log_factor += std::log(base == ActionBase::kGlobal ? 1 + action / 100.0 : action / 100.0) /
                  static_cast<double>(p);
  }
  double target = global * std::exp(log_factor);
  if (has_anchor(base)) {
    double anchor =
        base == ActionBase::kNoise ? measured_noise_scale(window) : goodput_optimal_batch(window);
    if (base == ActionBase::kGoodputSteady && goodput_within(window, kGoodputHysteresis)) {
      anchor = global;
    }
    target = anchor > 0 && std::isfinite(anchor) && window.workers.size() == p
                 ? anchor * std::exp(log_factor)
                 : global;
  }
  // The cluster asks for at most 2^40 samples in all, which keeps llround defined.
  const double scale = std::min(target / global, 0x1p40 / global);
  for (std::size_t w = 0; w < p; ++w) out[w] = std::llround(share(w) * scale);
}

}  // namespace dynamix
