// BatchSizeEnv: decisions every k BSP iterations over one TrainingRun per episode.
#include "gym/batch_size_env.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "gym/rules.h"
#include "sim/core/check.h"

namespace dynamix {
namespace {

void validate(const EnvOptions& options) {
  if (options.decision_interval < 1) {
    throw EnvError("decision_interval: expected k >= 1 iterations, found " +
                   std::to_string(options.decision_interval));
  }
  if (const std::optional<int> bad = invalid_action(options.action_base, options.actions)) {
    throw EnvError("actions: expected " + action_rule(options.action_base) + ", found " +
                   std::to_string(*bad));
  }
  if (options.decision_lag < 0 || options.decision_lag > 1) {
    throw EnvError("decision_lag: expected 0 or 1 windows, found " +
                   std::to_string(options.decision_lag));
  }
  if (options.max_batch_change != 0 &&
      !(options.max_batch_change >= 1 && std::isfinite(options.max_batch_change))) {
    throw EnvError("max_batch_change: expected 0 (none) or a finite factor >= 1, found " +
                   std::to_string(options.max_batch_change));
  }
  if (options.max_lr_change != 0 &&
      !(options.max_lr_change >= 1 && std::isfinite(options.max_lr_change))) {
    throw EnvError("max_lr_change: expected 0 (none) or a finite factor >= 1, found " +
                   std::to_string(options.max_lr_change));
  }
  if (options.min_batch < 1) {
    throw EnvError("min_batch: expected >= 1, found " + std::to_string(options.min_batch));
  }
  if (options.max_batch < options.min_batch) {
    throw EnvError("max_batch: expected >= min_batch (" + std::to_string(options.min_batch) +
                   "), found " + std::to_string(options.max_batch));
  }
  if (options.initial_batch < 0) {
    throw EnvError("initial_batch: expected >= 0 (0: the scenario's), found " +
                   std::to_string(options.initial_batch));
  }
  const RewardOptions& reward = options.reward;
  for (double weight : {reward.alpha, reward.beta, reward.delta, reward.eta, reward.accuracy_weight,
                        reward.time_weight}) {
    if (!std::isfinite(weight)) throw EnvError("reward: expected finite weights");
  }
  if (!(reward.shaping_discount > 0 && reward.shaping_discount <= 1)) {
    throw EnvError("reward.shaping_discount: expected a number in (0, 1], found " +
                   std::to_string(reward.shaping_discount));
  }
  if (!(reward.time_scale_s >= 0) || !std::isfinite(reward.time_scale_s)) {
    throw EnvError("reward.time_scale_s: expected >= 0 (0: the first window's duration), found " +
                   std::to_string(reward.time_scale_s));
  }
}

// Progress is the largest fraction spent of any budget; without one, of the reference run.
double progress_of(const TrainingRun& run, const Scenario& scenario) {
  double progress = 0;
  bool budgeted = false;
  if (scenario.max_iterations) {
    budgeted = true;
    progress = std::max(progress, static_cast<double>(run.iterations()) /
                                      static_cast<double>(*scenario.max_iterations));
  }
  if (scenario.training.budget_epochs) {
    budgeted = true;
    progress = std::max(progress, run.epochs() / *scenario.training.budget_epochs);
  }
  if (scenario.training.budget_time_s) {
    budgeted = true;
    progress = std::max(progress, to_seconds(run.now()) / *scenario.training.budget_time_s);
  }
  if (!budgeted) {
    progress = run.epochs() / std::max(scenario.workload.statistics.reference_epochs, 1.0);
  }
  return std::clamp(progress, 0.0, 1.0);
}

/// What of each budget is spent and how near the target the run is (the window's budget fields).
void fill_budgets(const TrainingRun& run, const Scenario& scenario, WindowMetrics& window) {
  const TrainingOptions& training = scenario.training;
  window.epoch_budget_used =
      training.budget_epochs ? std::clamp(run.epochs() / *training.budget_epochs, 0.0, 1.0) : 0.0;
  window.time_budget_used =
      training.budget_time_s ? std::clamp(to_seconds(run.now()) / *training.budget_time_s, 0.0, 1.0)
                             : 0.0;
  window.target_progress =
      std::clamp(window.validation_accuracy / training.target_accuracy, 0.0, 1.0);
}

}  // namespace

BatchSizeEnv::BatchSizeEnv(std::shared_ptr<const ScenarioSource> scenarios, EnvOptions options)
    : scenarios_(std::move(scenarios)), options_(std::move(options)), reward_(options_.reward) {
  if (!scenarios_) throw EnvError("BatchSizeEnv: expected a scenario source, found none");
  if (options_.actions.empty()) options_.actions = default_actions(options_.action_base);
  validate(options_);
  if (options_.action_base == ActionBase::kRule) {
    rules_ = std::make_unique<RuleBook>(options_.actions);
  }
}

BatchSizeEnv::~BatchSizeEnv() = default;
BatchSizeEnv::BatchSizeEnv(BatchSizeEnv&&) noexcept = default;
BatchSizeEnv& BatchSizeEnv::operator=(BatchSizeEnv&&) noexcept = default;

std::optional<std::size_t> BatchSizeEnv::last_rule_choice() const {
  if (!rules_ || decision_ == 0) return std::nullopt;
  return rules_->last_choice();
}

DecisionContext BatchSizeEnv::decision_context() const {
  return {.options = options_,
          .window = window_,
          .batches = batches_,
          .max_batches = max_batches_,
          .reference_batch = scenario_->workload.statistics.reference_batch,
          .epochs = run_->epochs(),
          .leaving_in_s = leaving_in_s_,
          .run = run_.get()};
}

ResetResult BatchSizeEnv::reset(std::uint64_t seed, const ResetOptions& reset_options) {
  if (reset_options.initial_batch < 0) {
    throw EnvError("reset: initial_batch: expected >= 0, found " +
                   std::to_string(reset_options.initial_batch));
  }
  scenario_ = scenarios_->scenario_for(seed);
  DYNAMIX_CHECK(scenario_ != nullptr, "the scenario source gave no scenario for seed " << seed);
  run_.reset();
  run_ = std::make_unique<TrainingRun>(*scenario_, seed);
  const std::size_t p = run_->workers();
  members_.assign(run_->members().begin(), run_->members().end());
  run_batches_.assign(p, 0);
  last_rows_.assign(p, WorkerWindow{});
  leaving_in_s_.assign(p, std::numeric_limits<double>::infinity());
  max_batches_.resize(p);
  for (std::size_t w = 0; w < p; ++w) {
    max_batches_[w] = run_->max_batch(w);
    if (run_->max_batch(w) < 1) {
      throw EnvError("scenario " + scenario_->name + ": worker " + run_->node(w).name + " (" +
                     run_->node(w).gpu + ") cannot hold one sample of " + scenario_->workload.name +
                     " in memory");
    }
  }
  accumulator_ = WindowAccumulator(*run_, scenario_->network.mss_bytes);
  window_ = WindowMetrics{};
  decision_ = 0;
  done_ = false;

  ResetResult result;
  const int reference = options_.initial_batch > 0 ? options_.initial_batch : scenario_->batch_size;
  const int initial = reset_options.initial_batch > 0 ? reset_options.initial_batch : reference;
  batches_.resize(p);
  result.info.batches.resize(p);
  result.info.clamped.resize(p);
  for (std::size_t w = 0; w < p; ++w) set_batch(w, initial, result.info);
  pending_ = batches_;
  pending_lr_bounds_ = {0.0, std::numeric_limits<double>::infinity()};
  run_window();
  window_.train_accuracy_change = 0;
  expected_accuracy_ = run_->expected_accuracy();
  reward_ = options_.reward;
  resolve_reward_scales(seed, reference, initial == reference);
  follow_members();
  if (rules_) rules_->begin_episode(decision_context());
  rules_restart_ = false;
  builder_.build(window_, result.observation);
  done_ = target_ends_episode() || run_->budget_exhausted();
  fill_info(result.info);
  result.info.batches.assign(batches_.begin(), batches_.end());
  result.info.clamped.resize(batches_.size());
  return result;
}

void BatchSizeEnv::resolve_reward_scales(std::uint64_t seed, int reference, bool measured) {
  const std::size_t p = run_->workers();
  double window_s = window_.time_s;
  double iteration_s = window_.iteration_s;
  if (!measured) {
    // The scales must not depend on where a policy starts, or returns of policies that start
    // at different batches would not compare: measure the reference batch on a twin run.
    TrainingRun probe(*scenario_, seed);
    std::vector<int> batches(p);
    for (std::size_t w = 0; w < p; ++w) batches[w] = clamp_run_batch(w, reference);
    for (int i = 0; i < options_.decision_interval; ++i) probe.step(batches);
    window_s = to_seconds(probe.now());
    iteration_s = window_s / options_.decision_interval;
  }
  if (reward_.time_scale_s == 0) reward_.time_scale_s = std::max(window_s, 1e-9);
  if (reward_.miss_time_s != 0) return;
  // The latest a budget can end: an epoch at global batch G takes D/G·t(G) and t(G)/G falls as
  // G grows, so the smallest batches take longest per epoch; an iteration takes at most
  // t(G_ref)·G/G_ref above the reference.
  double reference_global = 0, smallest_global = 0, largest_global = 0;
  for (std::size_t w = 0; w < p; ++w) {
    reference_global += clamp_run_batch(w, reference);
    smallest_global += clamp_run_batch(w, options_.min_batch);
    largest_global += clamp_run_batch(w, options_.max_batch);
  }
  double latest = std::numeric_limits<double>::infinity();
  const TrainingOptions& training = scenario_->training;
  if (training.budget_time_s) latest = std::min(latest, *training.budget_time_s);
  if (training.budget_epochs) {
    latest = std::min(latest, *training.budget_epochs *
                                  static_cast<double>(scenario_->workload.dataset_size) /
                                  smallest_global * iteration_s);
  }
  if (scenario_->max_iterations) {
    latest = std::min(latest, static_cast<double>(*scenario_->max_iterations) * iteration_s *
                                  std::max(1.0, largest_global / reference_global));
  }
  reward_.miss_time_s = std::isfinite(latest) ? latest : 0;
}

StepResult BatchSizeEnv::step(std::span<const int> actions) {
  StepResult result;
  step(actions, result);
  return result;
}

StepResult BatchSizeEnv::step_batches(std::span<const int> batches) {
  StepResult result;
  step_batches(batches, result);
  return result;
}

void BatchSizeEnv::check_can_step(std::size_t size, const char* what) const {
  if (!run_) throw EnvError("step: the environment has not been reset; call reset(seed) first");
  if (done_) {
    throw EnvError("step: the episode has ended (terminated or truncated); call reset(seed)");
  }
  if (size != workers()) {
    throw EnvError(std::string("step: expected ") + std::to_string(workers()) + " " + what +
                   " (one per worker), found " + std::to_string(size));
  }
}

void BatchSizeEnv::step(std::span<const int> actions, StepResult& out) {
  check_can_step(actions.size(), "action indices");
  const auto choices = static_cast<int>(options_.actions.size());
  for (std::size_t w = 0; w < actions.size(); ++w) {
    if (actions[w] < 0 || actions[w] >= choices) {
      throw EnvError("step: action index " + std::to_string(actions[w]) + " for worker " +
                     std::to_string(w) + " is outside the action set [0, " +
                     std::to_string(choices) + ")");
    }
  }
  const std::size_t p = actions.size();
  out.info.batches.resize(p);
  out.info.clamped.resize(p);
  if (rules_) {
    if (rules_restart_) rules_->begin_episode(decision_context());
    rules_restart_ = false;
    rules_->decide(decision_context(), actions, requested_);
  } else {
    requested_batches(options_.action_base, options_.actions, window_, batches_, actions,
                      requested_);
  }
  for (std::size_t w = 0; w < p; ++w) set_batch(w, requested_[w], out.info);
  apply_guard_rail(out.info);
  apply_lr_guard_rail();
  apply_lag();
  advance(out);
}

void BatchSizeEnv::step_batches(std::span<const int> batches, StepResult& out) {
  check_can_step(batches.size(), "batch sizes");
  for (std::size_t w = 0; w < batches.size(); ++w) {
    if (batches[w] < 1) {
      throw EnvError("step_batches: batch " + std::to_string(batches[w]) + " for worker " +
                     std::to_string(w) + ": expected >= 1 sample");
    }
  }
  const std::size_t p = batches.size();
  out.info.batches.resize(p);
  out.info.clamped.resize(p);
  for (std::size_t w = 0; w < p; ++w) set_batch(w, batches[w], out.info);
  apply_guard_rail(out.info);
  apply_lr_guard_rail();
  apply_lag();
  advance(out);
}

std::vector<int> bound_global_change(std::vector<int> batches, std::int64_t reported, double change,
                                     const std::vector<int>& caps) {
  const double total = std::accumulate(batches.begin(), batches.end(), 0.0);
  const double target = std::clamp(total, static_cast<double>(reported) / change,
                                   static_cast<double>(reported) * change);
  if (target == total) return batches;
  const double scale = target / total;
  for (std::size_t w = 0; w < batches.size(); ++w) {
    const double scaled =
        scale > 1 ? std::ceil(batches[w] * scale) : std::floor(batches[w] * scale);
    batches[w] = static_cast<int>(std::clamp(scaled, 1.0, static_cast<double>(caps[w])));
  }
  return batches;
}

void BatchSizeEnv::apply_guard_rail(StepInfo& info) {
  if (options_.max_batch_change == 0) return;
  std::int64_t reported = 0;
  for (const WorkerWindow& worker : window_.workers) {
    reported += static_cast<std::int64_t>(worker.batch_size);
  }
  std::vector<int> caps(batches_.size());
  for (std::size_t w = 0; w < caps.size(); ++w) caps[w] = clamp_batch(w, options_.max_batch);
  const std::vector<int> bounded =
      bound_global_change(batches_, reported, options_.max_batch_change, caps);
  for (std::size_t w = 0; w < bounded.size(); ++w) {
    info.clamped[w] = info.clamped[w] || bounded[w] != batches_[w];
  }
  batches_ = bounded;
}

void BatchSizeEnv::apply_lr_guard_rail() {
  if (options_.max_lr_change == 0) return;
  const double in_force = run_->lr_factor();
  std::pair<double, double> decided{in_force / options_.max_lr_change,
                                    in_force * options_.max_lr_change};
  if (options_.decision_lag == 1) std::swap(decided, pending_lr_bounds_);
  run_->bound_lr_factor(decided.first, decided.second);
}

void BatchSizeEnv::apply_lag() {
  if (options_.decision_lag == 0) return;
  std::swap(batches_, pending_);
}

int BatchSizeEnv::clamp_batch(std::size_t member, long long requested) const {
  return clamp_run_batch(members_[member], requested);
}

int BatchSizeEnv::clamp_run_batch(std::size_t worker, long long requested) const {
  const long long memory = run_->max_batch(worker);
  const long long upper = std::min<long long>(options_.max_batch, memory);
  const long long lower = std::min<long long>(options_.min_batch, upper);
  return static_cast<int>(std::clamp(requested, lower, upper));
}

void BatchSizeEnv::set_batch(std::size_t worker, long long requested, StepInfo& info) {
  batches_[worker] = clamp_batch(worker, requested);
  info.clamped[worker] = batches_[worker] != requested;
}

bool BatchSizeEnv::target_ends_episode() const {
  return options_.stop_at_target && run_->reached_target();
}

void BatchSizeEnv::run_window() {
  for (std::size_t i = 0; i < members_.size(); ++i) run_batches_[members_[i]] = batches_[i];
  for (int i = 0; i < options_.decision_interval; ++i) {
    const IterationRecord& record = run_->step(run_batches_);
    accumulator_.add(record);
    if (observer_) observer_(*run_, record);
    if (target_ends_episode() || run_->budget_exhausted()) break;
  }
  accumulator_.finish(window_.train_accuracy, run_->validation_accuracy().value_or(0.0),
                      progress_of(*run_, *scenario_), window_);
  fill_budgets(*run_, *scenario_, window_);
  if (!scenario_->preemption.enabled()) return;
  for (std::size_t w = 0; w < window_.workers.size(); ++w) {
    if (window_.workers[w].batch_size > 0) last_rows_[w] = window_.workers[w];
  }
  keep_member_rows();
}

void BatchSizeEnv::keep_member_rows() {
  window_.workers.resize(members_.size());
  for (std::size_t i = 0; i < members_.size(); ++i) window_.workers[i] = last_rows_[members_[i]];
}

void BatchSizeEnv::follow_members() {
  if (!scenario_->preemption.enabled()) return;
  const std::span<const std::size_t> now_members = run_->members();
  if (!std::equal(now_members.begin(), now_members.end(), members_.begin(), members_.end())) {
    // Survivors keep their batches; a returning worker runs the batch it had when it left.
    std::vector<int> run_pending = run_batches_;
    for (std::size_t i = 0; i < members_.size(); ++i) run_pending[members_[i]] = pending_[i];
    members_.assign(now_members.begin(), now_members.end());
    const std::size_t m = members_.size();
    batches_.resize(m);
    pending_.resize(m);
    max_batches_.resize(m);
    for (std::size_t i = 0; i < m; ++i) {
      batches_[i] = run_batches_[members_[i]];
      pending_[i] = run_pending[members_[i]];
      max_batches_[i] = run_->max_batch(members_[i]);
    }
    keep_member_rows();
    rules_restart_ = true;
  }
  leaving_in_s_.resize(members_.size());
  const TimePoint now = run_->now();
  for (std::size_t i = 0; i < members_.size(); ++i) {
    const TimePoint departure = run_->departure(members_[i]);
    leaving_in_s_[i] = departure == kTimeInfinity ? std::numeric_limits<double>::infinity()
                                                  : to_seconds(departure - now);
  }
}

void BatchSizeEnv::fill_info(StepInfo& info) const {
  info.decision = decision_;
  info.time_s = to_seconds(run_->now());
  info.window_s = 0;
  info.time_scale_s = reward_.time_scale_s;
  info.iteration = run_->iterations();
  info.validation_accuracy = run_->validation_accuracy().value_or(0.0);
  info.epochs = run_->epochs();
  info.time_to_target_s =
      run_->time_to_target() ? std::optional(to_seconds(*run_->time_to_target())) : std::nullopt;
  info.autoreset = false;
}

void BatchSizeEnv::advance(StepResult& out) {
  ++decision_;
  const double window_start_s = to_seconds(run_->now());
  run_window();
  // The rewards and info are the deciding members', the observation the next decision's.
  out.info.batches.assign(batches_.begin(), batches_.end());
  out.rewards.resize(window_.workers.size());
  const double expected = run_->expected_accuracy();
  const double window_s = to_seconds(run_->now()) - window_start_s;
  const double discount =
      std::pow(reward_.shaping_discount,
               discount_exponent(reward_.shaping_discount_by_time, window_s, reward_.time_scale_s));
  compute_rewards(reward_, scenario_->training.optimizer, window_, out.rewards,
                  reward_.noise_free_accuracy
                      ? std::optional(discount * expected - expected_accuracy_)
                      : std::nullopt);
  expected_accuracy_ = expected;
  out.terminated = target_ends_episode();
  out.truncated = !out.terminated && run_->budget_exhausted();
  done_ = out.terminated || out.truncated;
  if (out.truncated && !run_->reached_target()) {
    const auto penalty = static_cast<float>(miss_penalty(reward_, to_seconds(run_->now())));
    for (float& reward : out.rewards) reward += penalty;
  }
  follow_members();
  builder_.build(window_, out.observation);
  fill_info(out.info);
  out.info.window_s = window_s;
}

}  // namespace dynamix
