// The hand-made batch-size policies a practitioner would otherwise pick; PPO must beat them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gym/action_base.h"
#include "gym/rules.h"
#include "gym/throughput_model.h"
#include "policies/policy.h"
#include "sim/cluster/variability.h"
#include "sim/core/random.h"

namespace dynamix {

/// The same batch on every worker, always.
class StaticPolicy : public Policy {
 public:
  explicit StaticPolicy(int batch) : batch_(batch) {}
  std::string name() const override { return "static:" + std::to_string(batch_); }
  PolicyKind kind() const override { return PolicyKind::kStatic; }
  int initial_batch() const override { return batch_; }
  std::vector<int> decide(const DecisionContext& context, const Observation& observation) override;

 private:
  int batch_;
};

/// A uniformly random action per worker: the floor every learned policy must clear.
class RandomPolicy : public Policy {
 public:
  explicit RandomPolicy(std::uint64_t seed) : rng_(seed, stream_id("random-policy")) {}
  std::string name() const override { return "random"; }
  PolicyKind kind() const override { return PolicyKind::kOther; }
  std::vector<int> decide(const DecisionContext& context, const Observation& observation) override;
  std::span<const int> last_actions() const override { return actions_; }

 private:
  Rng rng_;
  std::vector<int> actions_;
};

/// A hand-made rule of gym/rules.h as a policy: the rule sees each window and decides on it.
class RulePolicy : public Policy {
 public:
  RulePolicy(std::unique_ptr<Rule> rule, PolicyKind kind) : rule_(std::move(rule)), kind_(kind) {}
  std::string name() const override { return rule_->name(); }
  PolicyKind kind() const override { return kind_; }
  void begin_episode(const DecisionContext& context) override { rule_->begin_episode(context); }
  std::vector<int> decide(const DecisionContext& context, const Observation& observation) override;

 private:
  std::unique_ptr<Rule> rule_;
  PolicyKind kind_;
};

/// ProportionalRule (LB-BSP) as a heuristic.
class ProportionalPolicy : public RulePolicy {
 public:
  ProportionalPolicy() : RulePolicy(std::make_unique<ProportionalRule>(), PolicyKind::kHeuristic) {}
};

/// GoodputRule (Pollux/AdaptDL, with its split and smoothing variants) as a heuristic.
class GoodputPolicy : public RulePolicy {
 public:
  explicit GoodputPolicy(bool proportional_split = false, double speed_memory = 1,
                         bool smoothed = false)
      : RulePolicy(std::make_unique<GoodputRule>(proportional_split, speed_memory, smoothed),
                   PolicyKind::kHeuristic) {}
};

/// Gradient-noise-scale threshold (KungFu-like, Mai et al., OSDI'20): starts every worker at the
/// smallest batch and grows it by one step while the global batch is below the measured noise
/// scale B_noise.
class GnsPolicy : public Policy {
 public:
  explicit GnsPolicy(int initial_batch = 32) : initial_batch_(initial_batch) {}
  std::string name() const override { return "gns"; }
  PolicyKind kind() const override { return PolicyKind::kHeuristic; }
  int initial_batch() const override { return initial_batch_; }
  std::vector<int> decide(const DecisionContext& context, const Observation& observation) override;

 private:
  int initial_batch_;
};

/// A global-batch schedule over epochs with the speed-balanced split: from epoch `from_epoch`
/// on, the global batch is `per_worker` × workers, split by measured speed as ProportionalPolicy
/// does. The oracle searches over these ("schedule:64/10:128/30:256": 64 per worker, 128 from
/// epoch 10, 256 from epoch 30). With `hindsight` ("hindsight:64/10:128") the split also knows
/// the simulated run's straggler timeline (TrainingRun::straggler_timeline, replayed from its
/// seed): each measured window is divided by the slowdown the worker had then, and the next
/// window is split by the slowdown each worker will have. That makes it a bound, not a policy
/// anyone could deploy; without a simulated run it splits as "schedule:" does.
class SchedulePolicy : public Policy {
 public:
  struct Phase {
    double from_epoch = 0;
    int per_worker = 0;
  };
  /// Phases in increasing from_epoch, the first from epoch 0.
  explicit SchedulePolicy(std::vector<Phase> phases, bool hindsight = false);
  /// Parses the text after "schedule:" (or "hindsight:"); an InputError on `source` otherwise.
  static SchedulePolicy parse(const std::string& text, const std::string& source,
                              bool hindsight = false);
  std::string name() const override;
  PolicyKind kind() const override { return PolicyKind::kSchedule; }
  int initial_batch() const override { return phases_.front().per_worker; }
  void begin_episode(const DecisionContext& context) override;
  std::vector<int> decide(const DecisionContext& context, const Observation& observation) override;
  const std::vector<Phase>& phases() const { return phases_; }

 private:
  /// Feeds the model the window with each worker's straggler slowdown taken out, and sets the
  /// slowdowns of the window to come.
  void observe_in_hindsight(const WindowMetrics& window);

  std::vector<Phase> phases_;
  bool hindsight_;
  ThroughputModel model_;
  std::optional<StragglerTimeline> timeline_;
  WindowMetrics corrected_;
  std::vector<double> slowdowns_;
};

/// AnchorRatioRule ("noise:R", "goodput:R", "goodput-steady:R"): what an untrained policy on that
/// base does (its neutral action), so the reference a learned one must beat. Reported as
/// "other", not as a heuristic.
class AnchorRatioPolicy : public RulePolicy {
 public:
  /// `base` is ActionBase::kNoise, kGoodput or kGoodputSteady, `percent` >= 1.
  AnchorRatioPolicy(ActionBase base, int percent)
      : RulePolicy(std::make_unique<AnchorRatioRule>(base, percent), PolicyKind::kOther) {}
};

/// The baseline a learned policy on `base` with action set `actions` decides as when it always
/// takes its neutral action (its fixed point: "goodput:100", "noise:400", for the rule base its
/// first rule); nullopt on a base whose neutral action no baseline equals (current, balanced,
/// global).
std::optional<std::string> fixed_point_policy(ActionBase base, std::span<const int> actions);

/// NoticeGoodputRule ("goodput-notice:R", goodput:R for spot instances) as a heuristic.
class NoticeGoodputPolicy : public RulePolicy {
 public:
  /// `percent` >= 1 of the survivors' goodput-optimal global batch.
  explicit NoticeGoodputPolicy(int percent)
      : RulePolicy(std::make_unique<NoticeGoodputRule>(percent), PolicyKind::kHeuristic) {}
};

/// A policy from its name: static:B, random, proportional, goodput, goodput+proportional,
/// goodput+straggler, gns, schedule:B/E:B/..., hindsight:B/E:B/..., noise:R, goodput:R,
/// goodput-notice:R.
/// Unknown names are an InputError on `source` (the option or key that named it) listing the
/// valid ones (ppo:PATH is resolved by the caller).
std::unique_ptr<Policy> make_baseline(const std::string& name, std::uint64_t seed,
                                      const std::string& source = "policy");
/// "static:B, random, proportional, goodput, goodput+proportional, goodput+straggler, gns,
/// schedule:B/E:B/..., hindsight:B/E:B/..., noise:R, goodput:R, goodput-notice:R".
std::string baseline_names();

}  // namespace dynamix
