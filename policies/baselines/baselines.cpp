// The baseline policies.
#include "policies/baselines/baselines.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/core/check.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"

namespace dynamix {
namespace {

/// The whole of `text` as a number (from_chars: no sign, space or trailing text accepted).
template <typename Number>
bool parse_whole(const std::string& text, Number& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size() && !text.empty() &&
         std::isfinite(static_cast<double>(value));
}

}  // namespace

std::vector<int> StaticPolicy::decide(const DecisionContext& context, const Observation&) {
  return std::vector<int>(context.workers(), batch_);
}

std::vector<int> RandomPolicy::decide(const DecisionContext& context, const Observation&) {
  const auto& actions = context.options.actions;
  std::vector<int> batches(context.batches.begin(), context.batches.end());
  actions_.resize(batches.size());
  for (std::size_t w = 0; w < batches.size(); ++w) {
    actions_[w] = static_cast<int>(rng_.below(actions.size()));
    batches[w] = std::max(context.options.min_batch,
                          batches[w] + actions[static_cast<std::size_t>(actions_[w])]);
  }
  return batches;
}

std::vector<int> RulePolicy::decide(const DecisionContext& context, const Observation&) {
  rule_->observe(context);
  return rule_->decide(context);
}

std::vector<int> GnsPolicy::decide(const DecisionContext& context, const Observation&) {
  const double noise = measured_noise_scale(context.window);
  std::vector<int> batches(context.batches.begin(), context.batches.end());
  double global = 0;
  for (int b : batches) global += b;
  if (global < noise) {
    const int grow =
        *std::max_element(context.options.actions.begin(), context.options.actions.end());
    for (int& b : batches) b += std::max(1, grow / 4);
  }
  return batches;
}

SchedulePolicy::SchedulePolicy(std::vector<Phase> phases, bool hindsight)
    : phases_(std::move(phases)), hindsight_(hindsight) {}

SchedulePolicy SchedulePolicy::parse(const std::string& text, const std::string& source,
                                     bool hindsight) {
  const std::string prefix = hindsight ? "hindsight:" : "schedule:";
  const auto refuse = [&] {
    return InputError(source, 0, "",
                      prefix + "B/E:B/... (per-worker batches B >= 1, epochs E increasing)",
                      "'" + prefix + text + "'");
  };
  std::vector<Phase> phases;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('/', start), text.size());
    const std::string part = text.substr(start, end - start);
    Phase phase;
    const std::size_t colon = part.find(':');
    if ((colon == std::string::npos) != phases.empty()) throw refuse();
    if (colon != std::string::npos && !parse_whole(part.substr(0, colon), phase.from_epoch))
      throw refuse();
    const std::string batch = colon == std::string::npos ? part : part.substr(colon + 1);
    if (!parse_whole(batch, phase.per_worker) || phase.per_worker < 1) throw refuse();
    if (!phases.empty() && !(phase.from_epoch > phases.back().from_epoch)) throw refuse();
    phases.push_back(phase);
    start = end + 1;
  }
  return SchedulePolicy(std::move(phases), hindsight);
}

std::string SchedulePolicy::name() const {
  std::string text =
      (hindsight_ ? "hindsight:" : "schedule:") + std::to_string(phases_.front().per_worker);
  for (std::size_t i = 1; i < phases_.size(); ++i) {
    text += '/';
    text += format_number(phases_[i].from_epoch);
    text += ':';
    text += std::to_string(phases_[i].per_worker);
  }
  return text;
}

void SchedulePolicy::begin_episode(const DecisionContext& context) {
  model_.reset(context.workers());
  timeline_.reset();
  slowdowns_.clear();
  if (hindsight_ && context.run != nullptr) timeline_.emplace(context.run->straggler_timeline());
}

void SchedulePolicy::observe_in_hindsight(const WindowMetrics& window) {
  const TimePoint end = kTimeZero + from_seconds(window.time_s);
  const Duration length = from_seconds(window.iteration_s * static_cast<double>(window.iterations));
  corrected_ = window;
  slowdowns_.resize(window.workers.size());
  for (std::size_t w = 0; w < window.workers.size(); ++w) {
    corrected_.workers[w].compute_s /= timeline_->mean_slowdown(w, end - length, end);
    slowdowns_[w] = timeline_->mean_slowdown(w, end, end + length);
  }
  model_.observe(corrected_);
}

std::vector<int> SchedulePolicy::decide(const DecisionContext& context, const Observation&) {
  if (timeline_) {
    observe_in_hindsight(context.window);
  } else {
    model_.observe(context.window);
  }
  const double epochs = context.epochs;
  int per_worker = phases_.front().per_worker;
  for (const Phase& phase : phases_) {
    if (epochs >= phase.from_epoch) per_worker = phase.per_worker;
  }
  const int global = per_worker * static_cast<int>(context.workers());
  return model_.proportional_split(global, context.options.min_batch, memory_limits(context),
                                   slowdowns_);
}

std::optional<std::string> fixed_point_policy(ActionBase base, std::span<const int> actions) {
  if (base == ActionBase::kRule) {
    if (actions.empty()) return std::nullopt;
    return std::string(kSelectableRules[static_cast<std::size_t>(actions.front())]);
  }
  if (!has_anchor(base)) return std::nullopt;
  const std::optional<std::size_t> neutral = neutral_action(base, actions);
  if (!neutral || actions[*neutral] < 1) return std::nullopt;
  return std::string(action_base_name(base)) + ":" + std::to_string(actions[*neutral]);
}

std::string baseline_names() {
  return "static:B, random, proportional, goodput, goodput+proportional, goodput+straggler, "
         "each goodput rule +ema, gns, schedule:B/E:B/..., hindsight:B/E:B/..., noise:R, "
         "goodput:R, goodput-steady:R, goodput-notice:R";
}

std::unique_ptr<Policy> make_baseline(const std::string& name, std::uint64_t seed,
                                      const std::string& source) {
  if (name.starts_with("static:")) {
    int batch = 0;
    if (!parse_whole(name.substr(7), batch) || batch < 1) {
      throw InputError(source, 0, "", "static:B with an integer batch B >= 1", "'" + name + "'");
    }
    return std::make_unique<StaticPolicy>(batch);
  }
  if (name.starts_with("schedule:")) {
    return std::make_unique<SchedulePolicy>(SchedulePolicy::parse(name.substr(9), source));
  }
  if (name.starts_with("hindsight:")) {
    return std::make_unique<SchedulePolicy>(SchedulePolicy::parse(name.substr(10), source, true));
  }
  for (const ActionBase base : kActionBases) {
    if (!has_anchor(base)) continue;
    const std::string prefix = std::string(action_base_name(base)) + ":";
    if (!name.starts_with(prefix)) continue;
    int percent = 0;
    if (!parse_whole(name.substr(prefix.size()), percent) || percent < 1) {
      throw InputError(source, 0, "", prefix + "R with an integer percentage R >= 1",
                       "'" + name + "'");
    }
    return std::make_unique<AnchorRatioPolicy>(base, percent);
  }
  if (name.starts_with("goodput-notice:")) {
    int percent = 0;
    if (!parse_whole(name.substr(15), percent) || percent < 1) {
      throw InputError(source, 0, "", "goodput-notice:R with an integer percentage R >= 1",
                       "'" + name + "'");
    }
    return std::make_unique<NoticeGoodputPolicy>(percent);
  }
  if (name == "random") return std::make_unique<RandomPolicy>(seed);
  // The anchors and goodput-notice:R were parsed above: what is left of the rules are heuristics.
  if (std::unique_ptr<Rule> rule = make_rule(name)) {
    return std::make_unique<RulePolicy>(std::move(rule), PolicyKind::kHeuristic);
  }
  if (name == "gns") return std::make_unique<GnsPolicy>();
  throw InputError(source, 0, "", "one of " + baseline_names() + ", ppo:PATH", "'" + name + "'");
}

}  // namespace dynamix
