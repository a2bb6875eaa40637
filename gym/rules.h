// The hand-made batch-size rules: what the adaptive baselines run, and what an action of the rule
// base picks between (ActionBase::kRule), so that a learned policy can do whatever any of them
// does, window by window.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gym/action_base.h"
#include "gym/batch_size_env.h"
#include "gym/throughput_model.h"

namespace dynamix {

/// Each worker's largest batch: the options' max_batch, or less where its memory holds less.
std::vector<int> memory_limits(const DecisionContext& context);

/// A rule that sets every worker's next batch from what the windows so far measured.
class Rule {
 public:
  virtual ~Rule() = default;
  /// "goodput+straggler", "goodput-steady:100".
  virtual std::string name() const = 0;
  /// Forgets every window seen: a new episode, or a cluster whose members changed.
  virtual void begin_episode(const DecisionContext& context) { (void)context; }
  /// Takes in the latest window (context.window). A rule sees each window once, before it
  /// decides on it, whether it decides or not.
  virtual void observe(const DecisionContext& context) { (void)context; }
  /// Another rule decided the batches in force (context.batches): the next decide() starts from
  /// those, not from this rule's last decision.
  virtual void take_over(const DecisionContext& context) { (void)context; }
  /// The batch each worker should run next, after observe() took in the same window; within the
  /// options' bounds, not yet clamped to memory.
  virtual std::vector<int> decide(const DecisionContext& context) = 0;
};

/// LB-BSP-style split (Chen et al., SoCC'20): keeps the episode's first global batch and gives
/// each worker a share proportional to its measured speed, so compute times meet at the barrier.
class ProportionalRule : public Rule {
 public:
  std::string name() const override { return "proportional"; }
  void begin_episode(const DecisionContext& context) override;
  void observe(const DecisionContext& context) override;
  std::vector<int> decide(const DecisionContext& context) override;

 private:
  ThroughputModel model_;
  int global_batch_ = 0;
};

/// Pollux/AdaptDL goodput (Qiao et al., OSDI'21): one batch on every worker, chosen to maximize
/// throughput × statistical efficiency, changed only for a gain above 5% (hysteresis). With
/// `proportional_split` the chosen global batch is split by speed instead of evenly, the speeds
/// fitted over every window so far; with a `speed_memory` below 1 as well ("goodput+straggler")
/// each window weighs `speed_memory` times the next, so a worker that slows down (a straggler)
/// has its share cut by its recently measured speed within a window or two. With `smoothed`
/// ("+ema" after the name) it reads B_noise averaged over windows as AdaptDL does
/// (SmoothedNoiseScale) instead of the last window's: the rule as deployed where the estimate is
/// as noisy as a real job's.
class GoodputRule : public Rule {
 public:
  explicit GoodputRule(bool proportional_split = false, double speed_memory = 1,
                       bool smoothed = false)
      : split_(proportional_split),
        model_(speed_memory),
        straggler_(speed_memory < 1),
        smoothed_(smoothed) {}
  std::string name() const override;
  void begin_episode(const DecisionContext& context) override;
  void observe(const DecisionContext& context) override;
  void take_over(const DecisionContext& context) override;
  std::vector<int> decide(const DecisionContext& context) override;

 private:
  bool split_;
  ThroughputModel model_;
  bool straggler_;
  bool smoothed_;
  SmoothedNoiseScale noise_;
  double noise_scale_ = 0;
  std::vector<int> current_;
};

/// The global batch at a fixed percentage of what an action base measures, split by speed: of
/// the gradient noise scale ("noise:R") or of the goodput-optimal batch ("goodput:R",
/// "goodput-steady:R"). That is what an untrained policy on that base does (its neutral action).
class AnchorRatioRule : public Rule {
 public:
  /// `base` is ActionBase::kNoise, kGoodput or kGoodputSteady, `percent` >= 1.
  AnchorRatioRule(ActionBase base, int percent);
  std::string name() const override {
    return std::string(action_base_name(base_)) + ":" + std::to_string(percent_);
  }
  std::vector<int> decide(const DecisionContext& context) override;

 private:
  ActionBase base_;
  int percent_;
  std::vector<long long> requested_;
};

/// goodput:R for spot instances, the rule a practitioner writes for preemption notices: when a
/// worker under notice (DecisionContext::leaving_in_s) leaves before the next decision takes
/// effect, the goodput-optimal global batch is measured on the survivors alone and split among
/// them by speed, and the departing worker runs the smallest batch until it leaves, so that its
/// departure takes nothing away from the global batch. Otherwise it is goodput:R.
class NoticeGoodputRule : public Rule {
 public:
  /// `percent` >= 1 of the survivors' goodput-optimal global batch.
  explicit NoticeGoodputRule(int percent)
      : percent_(percent), anchor_(ActionBase::kGoodput, percent) {}
  std::string name() const override { return "goodput-notice:" + std::to_string(percent_); }
  std::vector<int> decide(const DecisionContext& context) override;

 private:
  int percent_;
  AnchorRatioRule anchor_;
  WindowMetrics survivors_;
  std::vector<int> survivor_batches_;
  std::vector<long long> requested_;
};

/// The rules an action of ActionBase::kRule can pick, by number: an action set of that base
/// lists numbers of this table, and its first is the neutral action (the anchor `dynamix train`
/// measures as the best rule that never misses on its selection scenarios).
inline constexpr std::array<std::string_view, 7> kSelectableRules = {
    "goodput:100", "goodput-steady:100",   "goodput-notice:100", "proportional",
    "goodput",     "goodput+proportional", "goodput+straggler"};

/// The number of `name` in kSelectableRules; nullopt for any other name.
std::optional<int> selectable_rule(std::string_view name);
/// The rule `name` (one of kSelectableRules, or any goodput rule with "+ema"), nullptr for a
/// name that is not a rule.
std::unique_ptr<Rule> make_rule(std::string_view name);

/// The rules of a kRule action set, each fed every window, the chosen one deciding: the state
/// an environment or a served job keeps between decisions of a rule-base policy.
class RuleBook {
 public:
  /// `actions` numbers of kSelectableRules (invalid_action checked them).
  explicit RuleBook(std::span<const int> actions);
  /// Every rule starts over.
  void begin_episode(const DecisionContext& context);
  /// Every rule takes in context.window, then the rule the workers' choices `chosen` (indices
  /// of the action set) agree on decides into `out` (agreed_choice). The caller starts the book
  /// over (begin_episode) when the members change, as it would a baseline.
  void decide(const DecisionContext& context, std::span<const int> chosen,
              std::vector<long long>& out);
  /// The action index the last decide() followed.
  std::size_t last_choice() const { return last_; }

 private:
  std::vector<std::unique_ptr<Rule>> rules_;
  std::vector<int> votes_;
  std::size_t last_ = 0;
};

/// The index most of `chosen` name among `choices` indices, ties to the lowest; 0 when empty.
std::size_t agreed_choice(std::span<const int> chosen, std::size_t choices,
                          std::vector<int>& votes);

}  // namespace dynamix
