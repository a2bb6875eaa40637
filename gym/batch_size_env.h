// BatchSizeEnv: Gymnasium-style environment in which one centralized agent moves every worker's
// batch every k iterations.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gym/action_base.h"
#include "gym/env_error.h"
#include "gym/observation.h"
#include "gym/reward.h"
#include "gym/scenario_source.h"
#include "sim/scenario/training_run.h"

namespace dynamix {

/// `batches` scaled so that their sum lies within [reported / change, reported * change], each
/// kept within [1, caps[w]] (caps win over the lower bound): dynamix serve's guard rail, which
/// the environment applies too (EnvOptions::max_batch_change).
std::vector<int> bound_global_change(std::vector<int> batches, std::int64_t reported, double change,
                                     const std::vector<int>& caps);

/// The environment's options; their keys, ranges and meanings are in gym/env_knobs.cpp, and these
/// defaults are the ones `dynamix train` and the Python package use.
struct EnvOptions {
  /// Iterations between decisions (k); 20 (docs/ppo.md).
  int decision_interval = 20;
  /// Windows between a decision and the window it applies to: 0, the next window (an
  /// instant arbitrator); 1, the window after (a deployed job: dynamix serve's decision on
  /// window w applies when window w+1 ends, adapter/README.md).
  int decision_lag = 0;
  /// dynamix serve's guard rail on the global batch: a decision's global batch lies within
  /// [G / c, G · c] of the last window's G (bound_global_change); 0 applies none.
  double max_batch_change = 0;
  /// dynamix serve's guard rail on the LR factor: the factor in force when a decision applies
  /// lies within [f / c, f · c] of the factor f in force in the window it was decided on
  /// (serve's default c is 2); 0 applies none.
  double max_lr_change = 0;
  /// Change per discrete action: samples for the current and balanced bases, percent of the
  /// global batch for the global base; empty means default_actions(action_base).
  std::vector<int> actions = {};
  /// What the changes apply to; goodput, which one policy.pt means the same on every cluster
  /// size with, not the paper's current (docs/ppo.md).
  ActionBase action_base = ActionBase::kGoodput;
  /// Batch bounds; the batch is also clamped to the worker's memory limit.
  int min_batch = 32;
  int max_batch = 1024;
  /// Batch at reset; 0 means the scenario's batch_size.
  int initial_batch = 0;
  /// End the episode (terminated) when the target is reached; false runs on to the budget
  /// (evaluation of final accuracy), info.time_to_target_s still set.
  bool stop_at_target = true;
  RewardOptions reward = {};
};

/// Gymnasium's reset options.
struct ResetOptions {
  /// Batch every worker starts at; 0 means EnvOptions::initial_batch.
  int initial_batch = 0;
};

/// Extra facts about a step, for logging and evaluation.
struct StepInfo {
  std::vector<int> batches;
  /// Per worker: the requested batch was clamped (bounds or memory).
  std::vector<bool> clamped;
  /// Decisions taken in this episode so far (0 after reset).
  std::int64_t decision = 0;
  double time_s = 0;
  /// Simulated seconds this step's window took (0 after reset).
  double window_s = 0;
  /// The reward's time unit this episode (RewardOptions::time_scale_s, resolved at reset).
  double time_scale_s = 0;
  std::int64_t iteration = 0;
  double validation_accuracy = 0;
  double epochs = 0;
  std::optional<double> time_to_target_s;
  /// Gymnasium next-step autoreset: this step ignored its actions and reset the episode.
  bool autoreset = false;
};

struct StepResult {
  Observation observation;
  std::vector<float> rewards;
  /// The run reached its target accuracy.
  bool terminated = false;
  /// A budget (epochs, time, iterations) ran out first: bootstrap the value here.
  bool truncated = false;
  StepInfo info;
};

struct ResetResult {
  Observation observation;
  StepInfo info;
};

/// Sees every simulated iteration (e.g. to write iterations.csv); must not throw.
using IterationObserver = std::function<void(const TrainingRun&, const IterationRecord&)>;

/// What a policy reads when it decides: the environment's state in the simulator, a real job's
/// report in deployment (adapter/server/arbitrator.h builds it from one).
struct DecisionContext {
  const EnvOptions& options;
  /// The latest raw window.
  const WindowMetrics& window;
  /// Every worker's batch during that window.
  std::span<const int> batches;
  /// The largest batch each worker's memory holds.
  std::span<const int> max_batches;
  /// The batch the job's learning rate was tuned for (statistical efficiency's M0).
  double reference_batch = 0;
  /// Epochs completed.
  double epochs = 0;
  /// Per worker, seconds until it leaves since its preemption notice came; infinity for a worker
  /// without a notice. Empty when the source knows of none (a real job whose report carries no
  /// leaving_in_s, adapter/server/report.h).
  std::span<const double> leaving_in_s = {};
  /// The simulated run, for hindsight bounds that read its event timeline (the oracle's
  /// hindsight schedules); null where no simulator runs the job (a served job).
  const TrainingRun* run = nullptr;

  std::size_t workers() const { return batches.size(); }
};

class RuleBook;

class BatchSizeEnv {
 public:
  /// Throws EnvError for invalid options (k < 1, an action set the base cannot take, bounds out
  /// of order). options().actions is the action set in force (the base's default if empty).
  BatchSizeEnv(std::shared_ptr<const ScenarioSource> scenarios, EnvOptions options = {});
  ~BatchSizeEnv();
  BatchSizeEnv(BatchSizeEnv&&) noexcept;
  BatchSizeEnv& operator=(BatchSizeEnv&&) noexcept;

  /// Starts an episode on the scenario the source gives for this seed and runs its first window
  /// of k iterations at the initial batch, so that the first observation carries measurements.
  ResetResult reset(std::uint64_t seed, const ResetOptions& options = {});
  /// One decision: action indices per worker, then k iterations. Throws EnvError for a vector of
  /// the wrong length, an index outside the action set, or a step after the episode ended.
  StepResult step(std::span<const int> actions);
  /// Sets batches directly (for baselines that choose batch sizes, not deltas); same checks,
  /// and a batch < 1 is an EnvError.
  StepResult step_batches(std::span<const int> batches);
  /// The same, writing into `out` and reusing its storage (no allocation in steady state).
  void step(std::span<const int> actions, StepResult& out);
  void step_batches(std::span<const int> batches, StepResult& out);
  /// Called for every iteration from now on (reset's window included); empty to stop.
  void set_iteration_observer(IterationObserver observer) { observer_ = std::move(observer); }

  /// Workers the next decision is for: the run's members (fewer while workers are preempted in
  /// an elastic run), 0 before the first reset. Observation rows, actions, batches() and the
  /// decision context follow the members in the run's worker order.
  std::size_t workers() const { return members_.size(); }
  /// The run's worker index of each of workers().
  const std::vector<std::size_t>& members() const { return members_; }
  const EnvOptions& options() const { return options_; }
  /// The reward options in force this episode (time_scale_s and miss_time_s resolved).
  const RewardOptions& reward_options() const { return reward_; }
  const ObservationSchema& schema() const { return builder_.schema(); }
  const TrainingRun& run() const { return *run_; }
  const Scenario& scenario() const { return *scenario_; }
  const std::vector<int>& batches() const { return batches_; }
  bool episode_over() const { return done_; }
  /// The latest raw window, before normalization (for baselines).
  const WindowMetrics& window() const { return window_; }
  /// Under ActionBase::kRule: the action index (of options().actions) of the rule that decided
  /// the last step; nullopt under the other bases or before a step.
  std::optional<std::size_t> last_rule_choice() const;
  /// What a policy deciding now reads.
  DecisionContext decision_context() const;

 private:
  void check_can_step(std::size_t size, const char* what) const;
  /// `requested` within the bounds and member `member`'s memory.
  int clamp_batch(std::size_t member, long long requested) const;
  int clamp_run_batch(std::size_t worker, long long requested) const;
  void set_batch(std::size_t worker, long long requested, StepInfo& info);
  void resolve_reward_scales(std::uint64_t seed, int reference, bool measured);
  bool target_ends_episode() const;
  void run_window();
  /// Under decision_lag 1, puts the batches just decided aside and the previous ones in force.
  /// With max_batch_change: the batches just decided bounded against the last window's global.
  void apply_guard_rail(StepInfo& info);
  /// With max_lr_change: bounds the LR factor of the window the decision applies to.
  void apply_lr_guard_rail();
  void apply_lag();
  void fill_info(StepInfo& info) const;
  void advance(StepResult& out);
  /// Keeps window_ to the rows of members_: a member preempted for the whole window shows its
  /// last measured row.
  void keep_member_rows();
  /// Follows the run's members after a window: the window, batches, bounds and notices.
  void follow_members();

  std::shared_ptr<const ScenarioSource> scenarios_;
  EnvOptions options_;
  RewardOptions reward_;
  ObservationBuilder builder_;
  std::shared_ptr<const Scenario> scenario_;
  std::unique_ptr<TrainingRun> run_;
  std::vector<int> batches_;
  /// With decision_lag 1: the batches decided last step, applied after this step's window.
  std::vector<int> pending_;
  /// With decision_lag 1 and max_lr_change: the LR bounds decided last step.
  std::pair<double, double> pending_lr_bounds_;
  /// The episode's memory limits, run().max_batch(w) per member.
  std::vector<int> max_batches_;
  /// The run's workers that batches_, pending_, max_batches_ and window_ are for.
  std::vector<std::size_t> members_;
  /// Per worker of the run: the batch it runs when a member, and its last measured window row.
  std::vector<int> run_batches_;
  std::vector<WorkerWindow> last_rows_;
  /// Per member: seconds until its departure after a notice (DecisionContext::leaving_in_s).
  std::vector<double> leaving_in_s_;
  /// Scratch: the batches this step's actions ask for.
  std::vector<long long> requested_;
  /// Under ActionBase::kRule: the rules, fed every window; started over when members change.
  std::unique_ptr<RuleBook> rules_;
  bool rules_restart_ = false;
  WindowAccumulator accumulator_;
  WindowMetrics window_;
  IterationObserver observer_;
  std::int64_t decision_ = 0;
  /// TrainingRun::expected_accuracy at the last decision (the noise-free reward's potential).
  double expected_accuracy_ = 0;
  bool done_ = true;
};

}  // namespace dynamix
