// PPO rollouts on a VectorEnv, GAE over per-(environment, worker) streams, and resumable state.
#include "policies/ppo/ppo_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <span>

#include "gym/env_knobs.h"
#include "policies/export/torchscript_policy.h"
#include "policies/ppo/checkpoint.h"
#include "policies/ppo/exploration.h"
#include "policies/ppo/gae.h"
#include "policies/ppo/running_mean_std.h"
#include "sim/core/check.h"
#include "sim/core/random.h"

namespace dynamix {

namespace {

struct EnvironmentState {
  Observation observation;
  double episode_return = 0;
  std::int64_t episode_length = 0;
  /// The episode ended on the last step: VectorEnv resets it on the next one.
  bool awaiting_reset = false;
  /// First sample of the previous decision, still waiting for its successor; -1 if none.
  std::int64_t pending = -1;
  /// Samples of that decision: its workers, which a preemption may make differ from the next's.
  std::size_t pending_rows = 0;
};

/// Samples of one rollout plus their links in time, for GAE.
struct RolloutBuffer {
  Rollout rollout;
  std::vector<float> rewards;
  std::vector<std::int64_t> next;
  std::vector<float> bootstrap;
  std::vector<float> discount_exponents;
  /// Whether the sample's action was drawn from π (the others acted greedily and only serve
  /// GAE as context).
  std::vector<char> sampled;

  std::int64_t append(const std::vector<float>& normalized_rows, std::size_t first_row,
                      std::size_t rows, std::size_t features) {
    const auto offset = static_cast<std::int64_t>(rollout.actions.size());
    rollout.observations.insert(rollout.observations.end(),
                                normalized_rows.begin() + first_row * features,
                                normalized_rows.begin() + (first_row + rows) * features);
    rollout.actions.resize(rollout.actions.size() + rows);
    rollout.log_probs.resize(rollout.log_probs.size() + rows);
    rollout.values.resize(rollout.values.size() + rows);
    rewards.resize(rewards.size() + rows);
    next.resize(next.size() + rows, -1);
    bootstrap.resize(bootstrap.size() + rows, 0.0f);
    discount_exponents.resize(discount_exponents.size() + rows, 1.0f);
    sampled.resize(sampled.size() + rows, 1);
    return offset;
  }
};

/// The samples whose actions were drawn from π, with their advantages and returns.
Rollout sampled_only(const Rollout& rollout, const std::vector<char>& sampled) {
  Rollout kept;
  const std::size_t features =
      rollout.size() == 0 ? 0 : rollout.observations.size() / rollout.size();
  for (std::size_t i = 0; i < rollout.size(); ++i) {
    if (!sampled[i]) continue;
    kept.observations.insert(kept.observations.end(), rollout.observations.begin() + i * features,
                             rollout.observations.begin() + (i + 1) * features);
    kept.actions.push_back(rollout.actions[i]);
    kept.log_probs.push_back(rollout.log_probs[i]);
    kept.values.push_back(rollout.values[i]);
    kept.advantages.push_back(rollout.advantages[i]);
    kept.returns.push_back(rollout.returns[i]);
  }
  return kept;
}

double explained_variance(const std::vector<float>& values, const std::vector<float>& returns) {
  const double n = static_cast<double>(values.size());
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double mean_return = 0;
  double mean_error = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    mean_return += returns[i] / n;
    mean_error += (returns[i] - values[i]) / n;
  }
  double variance_return = 0;
  double variance_error = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    variance_return += std::pow(returns[i] - mean_return, 2) / n;
    variance_error += std::pow(returns[i] - values[i] - mean_error, 2) / n;
  }
  return variance_return == 0 ? std::numeric_limits<double>::quiet_NaN()
                              : 1 - variance_error / variance_return;
}

/// Refuses a resume whose settings differ from those of the checkpoint's run, naming the first.
void require_same_run(const RunSettings& saved, const RunSettings& current,
                      const std::string& source) {
  auto value_of = [](const RunSettings& settings, const std::string& name) {
    const auto found = std::find_if(settings.begin(), settings.end(),
                                    [&](const auto& setting) { return setting.first == name; });
    return found == settings.end() ? std::optional<std::string>() : found->second;
  };
  const std::optional<std::string> scenario = value_of(saved, "scenario");
  const std::string run =
      "this checkpoint's run" + (scenario ? " on scenario " + excerpt(*scenario) : "");
  auto refuse = [&](const std::string& name, const std::optional<std::string>& was,
                    const std::optional<std::string>& now) {
    throw PolicyFileError(
        source, 0, "--" + name, (was ? excerpt(*was) : "no value") + " (" + run + ")",
        (now ? excerpt(*now) : "no value") + " (a resume repeats the run's options)");
  };
  for (const auto& [name, value] : current) {
    const std::optional<std::string> was = value_of(saved, name);
    if (was != value) refuse(name, was, value);
  }
  for (const auto& [name, value] : saved) {
    if (!value_of(current, name)) refuse(name, value, std::nullopt);
  }
}

}  // namespace

struct PpoTrainer::Impl {
  VectorEnv& envs;
  PpoOptions options;
  RunSettings run;
  std::size_t features;
  std::unique_ptr<PpoLearner> learner;
  Exploration exploration;
  RunningMeanStd statistics;
  std::vector<EnvironmentState> environments;
  VectorReplay replay;
  bool started = false;
  std::int64_t updates = 0;
  std::int64_t env_steps = 0;

  Impl(VectorEnv& vector_env, PpoOptions ppo_options, RunSettings run_settings)
      : envs(vector_env),
        options(std::move(ppo_options)),
        run(std::move(run_settings)),
        features(envs.env(0).schema().features_per_worker()),
        learner(std::make_unique<PpoLearner>(
            features, envs.env(0).options().actions.size(), options,
            neutral_action(envs.env(0).options().action_base, envs.env(0).options().actions))),
        exploration(options, shares_one_action(envs.env(0).options().action_base)),
        statistics(features),
        environments(envs.size()) {}

  PolicyMetadata environment_metadata() const { return metadata_of(envs.env(0)); }

  /// The options, every row of the environment's table and the run settings (those not already
  /// recorded), as a checkpoint records them and a resume must repeat them.
  RunSettings settings() const {
    RunSettings all = dynamix::settings(options);
    all.emplace_back("envs", std::to_string(envs.size()));
    for (const auto& [key, value] : shown_values(env_knobs(), envs.env(0).options())) {
      all.emplace_back(key, value);
    }
    for (const auto& setting : run) {
      const bool recorded = std::any_of(
          all.begin(), all.end(), [&](const auto& entry) { return entry.first == setting.first; });
      if (!recorded) all.push_back(setting);
    }
    return all;
  }

  void reset_all(std::uint64_t seed) {
    std::vector<ResetResult> resets = envs.reset(seed);
    for (std::size_t i = 0; i < environments.size(); ++i) {
      environments[i] = {.observation = std::move(resets[i].observation)};
    }
    replay = {.seed = seed, .actions = {}};
    started = true;
  }

  void reset_if_due() {
    const bool due = options.reset_interval > 0 && updates % options.reset_interval == 0;
    if (started && !due) return;
    reset_all(
        Rng(options.seed, stream_id("ppo.reset", static_cast<std::uint64_t>(updates))).next());
  }

  struct EpisodeEnd {
    double episode_return;
    std::int64_t length;
    double time_s;
  };

  /// Folds one VectorEnv result into environment i's state; the episode's summary if it ended.
  std::optional<EpisodeEnd> advance(std::size_t i, StepResult& result) {
    EnvironmentState& state = environments[i];
    if (result.info.autoreset) {
      state = {.observation = std::move(result.observation)};
      return std::nullopt;
    }
    double mean_reward = 0;
    for (float reward : result.rewards) {
      mean_reward += reward / static_cast<double>(result.rewards.size());
    }
    state.episode_return += mean_reward;
    ++state.episode_length;
    if (result.terminated || result.truncated) {
      state.awaiting_reset = true;
      return EpisodeEnd{state.episode_return, state.episode_length, result.info.time_s};
    }
    state.observation = std::move(result.observation);
    return std::nullopt;
  }

  void record(std::span<const std::vector<int>> actions) {
    for (const std::vector<int>& env_actions : actions) {
      replay.actions.push_back(static_cast<int>(env_actions.size()));
      replay.actions.insert(replay.actions.end(), env_actions.begin(), env_actions.end());
    }
  }

  std::vector<float> normalize(const std::vector<float>& raw) const {
    std::vector<float> out(raw.size());
    statistics.normalize(raw, out, static_cast<float>(options.observation_clip));
    return out;
  }

  /// One rollout step's batch: the workers of every environment not awaiting its reset.
  struct StepBatch {
    std::vector<WorkerGroup> groups;
    std::size_t rows = 0;
    std::vector<float> normalized;
  };

  /// Stacks the environments' observations (updating the running statistics) and normalizes.
  StepBatch gather() {
    StepBatch batch;
    batch.groups.resize(environments.size());
    std::vector<float> raw;
    for (std::size_t i = 0; i < environments.size(); ++i) {
      batch.groups[i].first_row = batch.rows;
      if (environments[i].awaiting_reset) continue;
      const Observation& observation = environments[i].observation;
      DYNAMIX_CHECK(observation.features == features, "environment "
                                                          << i << " gives " << observation.features
                                                          << " features, not " << features);
      batch.groups[i].workers = observation.workers;
      batch.rows += observation.workers;
      raw.insert(raw.end(), observation.values.begin(), observation.values.end());
    }
    if (batch.rows > 0) {
      statistics.update(raw, batch.rows);
      batch.normalized = normalize(raw);
    }
    return batch;
  }

  /// Raw observations whose V closes streams the rollout cut, and the samples that take it.
  struct Bootstraps {
    std::vector<float> raw;
    std::vector<std::int64_t> samples;

    /// The `count` samples from `first_sample` take V of the observation's rows in order; after
    /// a membership change, a sample without a row of its own takes the first row's.
    void add(const Observation& observation, std::int64_t first_sample, std::size_t count) {
      if (observation.workers == 0) return;
      for (std::size_t w = 0; w < count; ++w) {
        const float* row = observation.row(w < observation.workers ? w : 0);
        raw.insert(raw.end(), row, row + observation.features);
        samples.push_back(first_sample + static_cast<std::int64_t>(w));
      }
    }
  };

  void bootstrap(const Bootstraps& cut, RolloutBuffer& buffer) {
    if (cut.samples.empty()) return;
    std::vector<float> values(cut.samples.size());
    learner->values(normalize(cut.raw), values);
    for (std::size_t k = 0; k < cut.samples.size(); ++k)
      buffer.bootstrap[cut.samples[k]] = values[k];
  }

  /// What an update's rollout collects: its samples and the episodes that ended in it.
  struct Collected {
    RolloutBuffer buffer;
    std::int64_t episodes = 0;
    double return_sum = 0;
    double time_sum = 0;
    double length_sum = 0;
  };

  /// Appends environment i's step to the buffer, linked to its previous decision; queues the
  /// bootstrap of an episode cut by truncation and counts an episode that ended.
  void store(std::size_t i, const StepBatch& batch, const StepActions& step, StepResult& result,
             Collected& collected, Bootstraps& truncated) {
    EnvironmentState& state = environments[i];
    const WorkerGroup group = batch.groups[i];
    DYNAMIX_CHECK(result.rewards.size() == group.workers,
                  result.rewards.size() << " rewards for " << group.workers << " workers");
    RolloutBuffer& buffer = collected.buffer;
    const std::int64_t offset =
        buffer.append(batch.normalized, group.first_row, group.workers, features);
    const auto exponent = static_cast<float>(discount_exponent(
        options.discount_by_time, result.info.window_s, result.info.time_scale_s));
    for (std::size_t w = 0; w < group.workers; ++w) {
      const std::size_t row = group.first_row + w;
      const std::size_t sample = static_cast<std::size_t>(offset) + w;
      buffer.rollout.actions[sample] = step.actions[row];
      buffer.rollout.log_probs[sample] = step.log_probs[row];
      buffer.rollout.values[sample] = step.values[row];
      buffer.rewards[sample] = result.rewards[w];
      buffer.discount_exponents[sample] = exponent;
      buffer.sampled[sample] = step.sampled[row];
      if (state.pending >= 0 && w < state.pending_rows)
        buffer.next[state.pending + w] = offset + static_cast<std::int64_t>(w);
    }
    // A preempted worker's last sample continues in the first member's: the time-to-target
    // return is the whole cluster's.
    for (std::size_t w = group.workers;
         state.pending >= 0 && group.workers > 0 && w < state.pending_rows; ++w)
      buffer.next[state.pending + static_cast<std::int64_t>(w)] = offset;
    state.pending = offset;
    state.pending_rows = group.workers;
    if (result.truncated && !result.terminated) {
      truncated.add(result.observation, offset, group.workers);
    }
    if (const std::optional<EpisodeEnd> end = advance(i, result)) {
      ++collected.episodes;
      collected.return_sum += end->episode_return;
      collected.time_sum += end->time_s;
      collected.length_sum += static_cast<double>(end->length);
      state.pending = -1;
    }
  }

  /// One decision of every environment, stored in `collected`.
  void collect_step(Rng& rng, Collected& collected) {
    const StepBatch batch = gather();
    std::vector<std::vector<int>> env_actions;
    std::vector<StepResult> results;
    const StepActions step = exploration.act_and_step(*learner, batch.normalized, batch.groups,
                                                      batch.rows, rng, envs, env_actions, results);
    record(env_actions);
    Bootstraps truncated;
    for (std::size_t i = 0; i < environments.size(); ++i) {
      if (results[i].info.autoreset) {
        advance(i, results[i]);
        continue;
      }
      ++env_steps;
      store(i, batch, step, results[i], collected, truncated);
    }
    bootstrap(truncated, collected.buffer);
  }

  /// The decisions still waiting for a successor at the rollout's end take V of the current
  /// observation.
  void bootstrap_pending(RolloutBuffer& buffer) {
    Bootstraps last;
    for (EnvironmentState& state : environments) {
      if (state.pending < 0) continue;
      last.add(state.observation, state.pending, state.pending_rows);
      state.pending = -1;
    }
    bootstrap(last, buffer);
  }

  double learning_rate(std::int64_t total_updates) const {
    const double progress = static_cast<double>(updates) /
                            static_cast<double>(std::max<std::int64_t>(1, total_updates));
    return options.anneal_learning_rate ? options.learning_rate * std::max(0.0, 1.0 - progress)
                                        : options.learning_rate;
  }

  /// GAE over the collected samples, the learner's epochs, and the update's statistics.
  UpdateStats learn(Collected& collected, std::int64_t total_updates, Rng& rng) {
    RolloutBuffer& buffer = collected.buffer;
    Rollout& rollout = buffer.rollout;
    rollout.advantages.resize(rollout.size());
    rollout.returns.resize(rollout.size());
    compute_gae(
        {buffer.rewards, rollout.values, buffer.next, buffer.bootstrap, buffer.discount_exponents},
        options.gamma, options.gae_lambda, rollout.advantages, rollout.returns);
    UpdateStats stats;
    stats.learning_rate = learning_rate(total_updates);
    const bool subset = exploration.trains_on_sampled_rows();
    const Rollout explored = subset ? sampled_only(rollout, buffer.sampled) : Rollout{};
    const Rollout& trained = subset ? explored : rollout;
    stats.losses = learner->update(trained, stats.learning_rate, rng);
    ++updates;

    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double episodes = static_cast<double>(collected.episodes);
    stats.update = updates;
    stats.env_steps = env_steps;
    stats.samples = static_cast<std::int64_t>(trained.size());
    stats.episodes = collected.episodes;
    stats.mean_return = collected.episodes ? collected.return_sum / episodes : nan;
    stats.mean_episode_time_s = collected.episodes ? collected.time_sum / episodes : nan;
    stats.mean_episode_length = collected.episodes ? collected.length_sum / episodes : nan;
    stats.explained_variance = explained_variance(rollout.values, rollout.returns);
    return stats;
  }

  UpdateStats update(std::int64_t total_updates) {
    Rng rng(options.seed, stream_id("ppo.update", static_cast<std::uint64_t>(updates)));
    Collected collected;
    for (int step = 0; step < options.rollout_steps; ++step) collect_step(rng, collected);
    bootstrap_pending(collected.buffer);
    return learn(collected, total_updates, rng);
  }

  void replay_from(const VectorReplay& saved, const std::string& source) {
    reset_all(saved.seed);
    const std::size_t m = environments.size();
    std::size_t at = 0;
    while (at < saved.actions.size()) {
      std::vector<std::vector<int>> step_actions(m);
      for (std::size_t i = 0; i < m; ++i) {
        const std::size_t count =
            at < saved.actions.size() ? static_cast<std::size_t>(saved.actions[at]) : 0;
        if (at + 1 + count > saved.actions.size()) {
          throw PolicyFileError(source, 0, "replay_actions", "whole steps of every environment",
                                "a history cut short");
        }
        step_actions[i].assign(saved.actions.begin() + static_cast<std::ptrdiff_t>(at + 1),
                               saved.actions.begin() + static_cast<std::ptrdiff_t>(at + 1 + count));
        at += 1 + count;
      }
      std::vector<StepResult> results;
      try {
        results = envs.step(step_actions);
      } catch (const EnvError& error) {
        throw PolicyFileError(source, 0, "replay_actions", "a history these environments replay",
                              error.what());
      }
      record(step_actions);
      for (std::size_t i = 0; i < m; ++i) advance(i, results[i]);
    }
  }
};

PpoTrainer::PpoTrainer(VectorEnv& envs, PpoOptions options, RunSettings run) {
  DYNAMIX_CHECK(envs.size() > 0, "a VectorEnv without environments");
  validate(options);
  impl_ = std::make_unique<Impl>(envs, std::move(options), std::move(run));
}

PpoTrainer::~PpoTrainer() = default;

void PpoTrainer::train(std::int64_t total_steps, const Callback& callback) {
  const auto per_update =
      static_cast<std::int64_t>(impl_->environments.size()) * impl_->options.rollout_steps;
  const std::int64_t total_updates = (total_steps + per_update - 1) / per_update;
  const auto began = std::chrono::steady_clock::now();
  while (impl_->updates < total_updates) {
    impl_->reset_if_due();
    UpdateStats stats = impl_->update(total_updates);
    stats.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    if (callback && !callback(stats)) break;
  }
}

std::int64_t PpoTrainer::updates() const { return impl_->updates; }
std::int64_t PpoTrainer::env_steps() const { return impl_->env_steps; }
const PpoOptions& PpoTrainer::options() const { return impl_->options; }
std::vector<float> PpoTrainer::parameters() const { return impl_->learner->parameters(); }

void PpoTrainer::save_checkpoint(const std::filesystem::path& file) const {
  TrainerState state{.environment = impl_->environment_metadata(),
                     .features = impl_->features,
                     .hidden_sizes = impl_->options.hidden_sizes,
                     .seed = impl_->options.seed,
                     .updates = impl_->updates,
                     .env_steps = impl_->env_steps,
                     .observation_statistics = impl_->statistics.serialize(),
                     .observation_clip = static_cast<float>(impl_->options.observation_clip),
                     .environments = impl_->environments.size(),
                     .replay = impl_->replay,
                     .settings = impl_->settings()};
  impl_->learner->save(file, to_extras(state));
}

void PpoTrainer::load_checkpoint(const std::filesystem::path& file) {
  const std::string source = file.string();
  const TrainerState state = from_extras(PpoLearner::read_extras(file), source);
  require_same_run(state.settings, impl_->settings(), source);
  const PolicyMetadata environment = impl_->environment_metadata();
  require_compatible(state.environment, environment.schema_json, environment.actions, source);
  if (state.environment.action_base != environment.action_base) {
    throw PolicyFileError(
        source, 0, "action_base",
        std::string(action_base_name(environment.action_base)) + " (this environment)",
        std::string(action_base_name(state.environment.action_base)));
  }
  if (state.features != impl_->features) {
    throw PolicyFileError(source, 0, "features",
                          std::to_string(impl_->features) + " (this environment)",
                          std::to_string(state.features));
  }
  if (state.environments != impl_->environments.size()) {
    throw PolicyFileError(source, 0, "environments",
                          std::to_string(impl_->environments.size()) + " (this VectorEnv)",
                          std::to_string(state.environments));
  }
  auto sizes = [](const std::vector<int>& hidden) {
    std::string text;
    for (int width : hidden) {
      if (!text.empty()) text += ' ';
      text += std::to_string(width);
    }
    return "hidden sizes [" + text + "]";
  };
  if (state.hidden_sizes != impl_->options.hidden_sizes) {
    throw PolicyFileError(source, 0, "hidden_sizes",
                          sizes(impl_->options.hidden_sizes) + " (these options)",
                          sizes(state.hidden_sizes));
  }
  impl_->learner->load(file);
  impl_->statistics.deserialize(state.observation_statistics);
  impl_->updates = state.updates;
  impl_->env_steps = state.env_steps;
  const bool reset_due =
      impl_->options.reset_interval > 0 && state.updates % impl_->options.reset_interval == 0;
  if (reset_due || (state.updates == 0 && state.replay.actions.empty())) {
    impl_->started = false;
  } else {
    impl_->replay_from(state.replay, source);
  }
}

PolicySnapshot PpoTrainer::policy_snapshot() const {
  return {.metadata = impl_->environment_metadata(),
          .observation_mean = impl_->statistics.float_mean(),
          .observation_std = impl_->statistics.float_std(),
          .observation_clip = static_cast<float>(impl_->options.observation_clip),
          .layers = impl_->learner->actor_layers()};
}

void PpoTrainer::export_policy(const std::filesystem::path& file) const {
  save_torchscript_policy(policy_snapshot(), file);
}

}  // namespace dynamix
