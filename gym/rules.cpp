// The hand-made rules, and the book of them a rule-base action picks from.
#include "gym/rules.h"

#include <algorithm>
#include <cmath>

#include "sim/core/check.h"
#include "sim/training/dynamics.h"

namespace dynamix {

std::vector<int> memory_limits(const DecisionContext& context) {
  std::vector<int> limits(context.workers());
  for (std::size_t w = 0; w < context.workers(); ++w) {
    limits[w] = std::min(context.options.max_batch, context.max_batches[w]);
  }
  return limits;
}

namespace {

std::vector<int> uniform(const DecisionContext& context, int batch,
                         const std::vector<int>& limits) {
  std::vector<int> batches(context.workers());
  for (std::size_t w = 0; w < batches.size(); ++w) {
    batches[w] = std::clamp(batch, context.options.min_batch, limits[w]);
  }
  return batches;
}

double goodput(const ThroughputModel& model, const std::vector<int>& batches, double reference,
               double noise_scale) {
  double global = 0;
  for (int b : batches) global += b;
  const double seconds = model.iteration_s(batches);
  if (seconds <= 0) return 0;
  return global / seconds * statistical_efficiency(global, reference, noise_scale);
}

}  // namespace

void ProportionalRule::begin_episode(const DecisionContext& context) {
  model_.reset(context.workers());
  global_batch_ = 0;
  for (int b : context.batches) global_batch_ += b;
}

void ProportionalRule::observe(const DecisionContext& context) { model_.observe(context.window); }

std::vector<int> ProportionalRule::decide(const DecisionContext& context) {
  return model_.proportional_split(global_batch_, context.options.min_batch,
                                   memory_limits(context));
}

std::string GoodputRule::name() const {
  const std::string rule =
      !split_ ? "goodput" : (straggler_ ? "goodput+straggler" : "goodput+proportional");
  return smoothed_ ? rule + "+ema" : rule;
}

void GoodputRule::begin_episode(const DecisionContext& context) {
  model_.reset(context.workers());
  noise_.reset();
  current_.assign(context.batches.begin(), context.batches.end());
}

void GoodputRule::observe(const DecisionContext& context) {
  const WindowMetrics& window = context.window;
  model_.observe(window);
  noise_scale_ = smoothed_ ? noise_.update(window) : measured_noise_scale(window);
}

void GoodputRule::take_over(const DecisionContext& context) {
  current_.assign(context.batches.begin(), context.batches.end());
}

std::vector<int> GoodputRule::decide(const DecisionContext& context) {
  const double reference = context.reference_batch;
  const std::vector<int> limits = memory_limits(context);
  const int p = static_cast<int>(context.workers());
  auto candidate = [&](int per_worker) {
    return split_ ? model_.proportional_split(per_worker * p, context.options.min_batch, limits)
                  : uniform(context, per_worker, limits);
  };
  std::vector<int> best = current_;
  double best_goodput = goodput(model_, current_, reference, noise_scale_);
  const double incumbent = best_goodput;
  const int step = std::max(1, context.options.min_batch / 4);
  for (int b = context.options.min_batch; b <= context.options.max_batch; b += step) {
    std::vector<int> batches = candidate(b);
    const double value = goodput(model_, batches, reference, noise_scale_);
    if (value > best_goodput) {
      best_goodput = value;
      best = std::move(batches);
    }
  }
  if (best_goodput > (1 + kGoodputHysteresis) * incumbent) current_ = best;
  return current_;
}

AnchorRatioRule::AnchorRatioRule(ActionBase base, int percent) : base_(base), percent_(percent) {
  DYNAMIX_CHECK(has_anchor(base), "no anchor for the " << action_base_name(base) << " base");
  DYNAMIX_CHECK(percent >= 1, "percent " << percent);
}

std::vector<int> AnchorRatioRule::decide(const DecisionContext& context) {
  const std::vector<int> percent = {percent_};
  const std::vector<int> chosen(context.workers(), 0);
  requested_batches(base_, percent, context.window, context.batches, chosen, requested_);
  std::vector<int> batches(requested_.size());
  for (std::size_t w = 0; w < batches.size(); ++w) {
    batches[w] = static_cast<int>(
        std::clamp<long long>(requested_[w], context.options.min_batch, context.options.max_batch));
  }
  return batches;
}

std::vector<int> NoticeGoodputRule::decide(const DecisionContext& context) {
  const std::size_t p = context.workers();
  // A worker computes until its last window: its share moves when it would leave before the
  // decision after this one takes effect.
  const double horizon_s = (1 + context.options.decision_lag) * context.options.decision_interval *
                           context.window.iteration_s;
  const auto leaving = [&](std::size_t w) {
    return context.leaving_in_s.size() == p && context.leaving_in_s[w] <= horizon_s;
  };
  survivors_ = context.window;
  survivors_.workers.clear();
  survivor_batches_.clear();
  for (std::size_t w = 0; w < p; ++w) {
    if (leaving(w)) continue;
    survivors_.workers.push_back(context.window.workers[w]);
    survivor_batches_.push_back(context.batches[w]);
  }
  if (survivor_batches_.size() == p || survivor_batches_.empty()) return anchor_.decide(context);
  const std::vector<int> percent = {percent_};
  const std::vector<int> chosen(survivor_batches_.size(), 0);
  requested_batches(ActionBase::kGoodput, percent, survivors_, survivor_batches_, chosen,
                    requested_);
  std::vector<int> batches(p, context.options.min_batch);
  std::size_t survivor = 0;
  for (std::size_t w = 0; w < p; ++w) {
    if (leaving(w)) continue;
    batches[w] = static_cast<int>(std::clamp<long long>(
        requested_[survivor++], context.options.min_batch, context.options.max_batch));
  }
  return batches;
}

std::optional<int> selectable_rule(std::string_view name) {
  const auto* found = std::find(kSelectableRules.begin(), kSelectableRules.end(), name);
  if (found == kSelectableRules.end()) return std::nullopt;
  return static_cast<int>(found - kSelectableRules.begin());
}

std::unique_ptr<Rule> make_rule(std::string_view name) {
  if (name == "goodput:100") return std::make_unique<AnchorRatioRule>(ActionBase::kGoodput, 100);
  if (name == "goodput-steady:100") {
    return std::make_unique<AnchorRatioRule>(ActionBase::kGoodputSteady, 100);
  }
  if (name == "goodput-notice:100") return std::make_unique<NoticeGoodputRule>(100);
  if (name == "proportional") return std::make_unique<ProportionalRule>();
  const bool smoothed = name.ends_with("+ema");
  const std::string_view rule = smoothed ? name.substr(0, name.size() - 4) : name;
  if (rule == "goodput") return std::make_unique<GoodputRule>(false, 1, smoothed);
  if (rule == "goodput+proportional") return std::make_unique<GoodputRule>(true, 1, smoothed);
  // Half of a worker's speed estimate is its last window: a slowdown shows within a window or
  // two, while one window's jitter moves the split by only half of it.
  if (rule == "goodput+straggler") return std::make_unique<GoodputRule>(true, 0.5, smoothed);
  return nullptr;
}

std::size_t agreed_choice(std::span<const int> chosen, std::size_t choices,
                          std::vector<int>& votes) {
  votes.assign(choices, 0);
  for (int choice : chosen) ++votes[static_cast<std::size_t>(choice)];
  return choices == 0 ? 0
                      : static_cast<std::size_t>(std::max_element(votes.begin(), votes.end()) -
                                                 votes.begin());
}

RuleBook::RuleBook(std::span<const int> actions) {
  for (int action : actions) {
    DYNAMIX_CHECK(action >= 0 && static_cast<std::size_t>(action) < kSelectableRules.size(),
                  "rule number " << action);
    rules_.push_back(make_rule(kSelectableRules[static_cast<std::size_t>(action)]));
  }
}

void RuleBook::begin_episode(const DecisionContext& context) {
  for (const std::unique_ptr<Rule>& rule : rules_) rule->begin_episode(context);
  last_ = 0;
}

void RuleBook::decide(const DecisionContext& context, std::span<const int> chosen,
                      std::vector<long long>& out) {
  DYNAMIX_CHECK(chosen.size() == context.workers(),
                chosen.size() << " choices for " << context.workers() << " workers");
  for (const std::unique_ptr<Rule>& rule : rules_) rule->observe(context);
  const std::size_t choice = agreed_choice(chosen, rules_.size(), votes_);
  Rule& rule = *rules_[choice];
  if (choice != last_) rule.take_over(context);
  last_ = choice;
  const std::vector<int> batches = rule.decide(context);
  out.assign(batches.begin(), batches.end());
}

}  // namespace dynamix
