// Trainer state in checkpoints, and export of a checkpoint's policy.
#include "policies/ppo/checkpoint.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "policies/export/torchscript_policy.h"
#include "policies/ppo/running_mean_std.h"

namespace dynamix {

namespace {

constexpr int kCheckpointFormat = 2;
constexpr std::int64_t kMaxEnvironments = 1 << 16;
constexpr std::int64_t kMaxWorkers = 1 << 20;
constexpr std::int64_t kMaxHiddenLayers = 16;
constexpr std::int64_t kMaxHiddenWidth = 1 << 14;
const std::string kSettingPrefix = "setting/";

template <typename T>
std::string join(const std::vector<T>& values) {
  std::ostringstream out;
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? " " : "") << values[i];
  return out.str();
}

std::string exact(float value) {
  char text[32];
  return {text, std::to_chars(text, text + sizeof(text), value).ptr};
}

class Reader {
 public:
  Reader(const CheckpointExtras& extras, std::string source) : source_(std::move(source)) {
    for (const auto& [key, value] : extras) entries_[key] = value;
  }

  const std::string& source() const { return source_; }

  const std::string& text(const std::string& key) const {
    const auto found = entries_.find(key);
    if (found == entries_.end()) {
      throw PolicyFileError(source_, 0, key, "this entry in the checkpoint", "none");
    }
    return found->second;
  }

  template <typename T>
  std::vector<T> integers(const std::string& key, T low, T high) const {
    const std::string& all = text(key);
    std::vector<T> values;
    const char* at = all.data();
    const char* const end = all.data() + all.size();
    while (true) {
      while (at < end && *at == ' ') ++at;
      if (at == end) break;
      T value{};
      const auto [next, error] = std::from_chars(at, end, value);
      if (error != std::errc() || (next != end && *next != ' ') || value < low || value > high) {
        throw PolicyFileError(
            source_, 0, key,
            "integers in [" + std::to_string(low) + ", " + std::to_string(high) + "]",
            excerpt(all));
      }
      values.push_back(value);
      at = next;
    }
    return values;
  }

  template <typename T>
  T integer(const std::string& key, T low = std::numeric_limits<T>::min(),
            T high = std::numeric_limits<T>::max()) const {
    const std::vector<T> values = integers<T>(key, low, high);
    if (values.size() != 1) {
      throw PolicyFileError(
          source_, 0, key,
          "one integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]",
          excerpt(text(key)));
    }
    return values.front();
  }

  float positive_float(const std::string& key) const {
    const std::string& all = text(key);
    float value = 0;
    const auto [next, error] = std::from_chars(all.data(), all.data() + all.size(), value);
    if (error != std::errc() || next != all.data() + all.size() || !std::isfinite(value) ||
        value <= 0) {
      throw PolicyFileError(source_, 0, key, "a finite number > 0", excerpt(all));
    }
    return value;
  }

 private:
  std::string source_;
  std::map<std::string, std::string> entries_;
};

/// The history must hold whole steps of every environment, each action an index of the set.
void check_replay(const std::vector<int>& actions, std::size_t environments,
                  std::size_t action_count, const std::string& source) {
  std::size_t at = 0;
  std::size_t groups = 0;
  while (at < actions.size()) {
    const int count = actions[at];
    if (count < 0 || count > kMaxWorkers ||
        at + 1 + static_cast<std::size_t>(count) > actions.size()) {
      throw PolicyFileError(
          source, 0, "replay_actions", "a worker count followed by that many action indices",
          "a count of " + std::to_string(count) + " at entry " + std::to_string(at));
    }
    for (std::size_t i = at + 1; i < at + 1 + static_cast<std::size_t>(count); ++i) {
      if (actions[i] < 0 || static_cast<std::size_t>(actions[i]) >= action_count) {
        throw PolicyFileError(source, 0, "replay_actions",
                              "action indices in [0, " + std::to_string(action_count) + ")",
                              std::to_string(actions[i]) + " at entry " + std::to_string(i));
      }
    }
    at += 1 + static_cast<std::size_t>(count);
    ++groups;
  }
  if (groups % environments != 0) {
    throw PolicyFileError(source, 0, "replay_actions",
                          "whole steps of " + std::to_string(environments) + " environments",
                          std::to_string(groups) + " environment steps");
  }
}

}  // namespace

CheckpointExtras to_extras(const TrainerState& state) {
  CheckpointExtras extras = {
      {"format", std::to_string(kCheckpointFormat)},
      {"features", std::to_string(state.features)},
      {"hidden_sizes", join(state.hidden_sizes)},
      {"seed", std::to_string(state.seed)},
      {"updates", std::to_string(state.updates)},
      {"env_steps", std::to_string(state.env_steps)},
      {"observation_statistics", state.observation_statistics},
      {"observation_clip", exact(state.observation_clip)},
      {"environments", std::to_string(state.environments)},
      {"replay_seed", std::to_string(state.replay.seed)},
      {"replay_actions", join(state.replay.actions)},
  };
  for (const auto& [name, content] : to_extra_files(state.environment)) {
    extras.emplace_back("policy/" + name, content);
  }
  for (const auto& [name, value] : state.settings) {
    extras.emplace_back(kSettingPrefix + name, value);
  }
  return extras;
}

TrainerState from_extras(const CheckpointExtras& extras, const std::string& source) {
  const Reader reader(extras, source);
  const int format = reader.integer<int>("format");
  if (format != kCheckpointFormat) {
    throw PolicyFileError(source, 0, "format",
                          "checkpoint format " + std::to_string(kCheckpointFormat),
                          std::to_string(format));
  }
  TrainerState state;
  std::map<std::string, std::string> policy_files;
  for (const std::string& name : extra_file_names()) {
    policy_files[name] = reader.text("policy/" + name);
  }
  state.environment = from_extra_files(policy_files, source);
  state.features = reader.integer<std::size_t>("features", 1, kMaxPolicyFeatures);
  if (state.features != state.environment.features) {
    throw PolicyFileError(source, 0, "features",
                          std::to_string(state.environment.features) + " (as policy/schema.json)",
                          std::to_string(state.features));
  }
  const std::vector<int> hidden = reader.integers<int>("hidden_sizes", 1, kMaxHiddenWidth);
  if (static_cast<std::int64_t>(hidden.size()) > kMaxHiddenLayers) {
    throw PolicyFileError(source, 0, "hidden_sizes",
                          "at most " + std::to_string(kMaxHiddenLayers) + " layers",
                          std::to_string(hidden.size()));
  }
  state.hidden_sizes = hidden;
  state.seed = reader.integer<std::uint64_t>("seed");
  state.updates = reader.integer<std::int64_t>("updates", 0);
  state.env_steps = reader.integer<std::int64_t>("env_steps", 0);
  state.observation_statistics = reader.text("observation_statistics");
  if (!RunningMeanStd(state.features).deserialize(state.observation_statistics)) {
    throw PolicyFileError(source, 0, "observation_statistics",
                          "statistics of " + std::to_string(state.features) + " features",
                          excerpt(state.observation_statistics));
  }
  state.observation_clip = reader.positive_float("observation_clip");
  state.environments = reader.integer<std::size_t>("environments", 1, kMaxEnvironments);
  state.replay.seed = reader.integer<std::uint64_t>("replay_seed");
  state.replay.actions = reader.integers<int>("replay_actions", 0, static_cast<int>(kMaxWorkers));
  check_replay(state.replay.actions, state.environments, state.environment.actions.size(), source);
  for (const auto& [key, value] : extras) {
    if (key.starts_with(kSettingPrefix)) {
      state.settings.emplace_back(key.substr(kSettingPrefix.size()), value);
    }
  }
  return state;
}

void export_checkpoint(const std::filesystem::path& checkpoint, const std::filesystem::path& out) {
  const TrainerState state = from_extras(PpoLearner::read_extras(checkpoint), checkpoint.string());
  PpoLearner learner(state.features, state.environment.actions.size(),
                     {.hidden_sizes = state.hidden_sizes});
  learner.load(checkpoint);
  RunningMeanStd statistics(state.features);
  statistics.deserialize(state.observation_statistics);
  save_torchscript_policy({.metadata = state.environment,
                           .observation_mean = statistics.float_mean(),
                           .observation_std = statistics.float_std(),
                           .observation_clip = state.observation_clip,
                           .layers = learner.actor_layers()},
                          out);
}

}  // namespace dynamix
