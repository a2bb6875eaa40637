// Trainer state in checkpoints, and export of a checkpoint's policy.
#include "policies/ppo/checkpoint.h"

#include <map>
#include <sstream>

#include "policies/export/torchscript_policy.h"
#include "policies/ppo/running_mean_std.h"

namespace dynamix {

namespace {

constexpr int kCheckpointFormat = 1;

template <typename T>
std::string join(const std::vector<T>& values) {
  std::ostringstream out;
  for (std::size_t i = 0; i < values.size(); ++i) out << (i ? " " : "") << values[i];
  return out.str();
}

std::string exact(float value) {
  std::ostringstream out;
  out.precision(9);
  out << value;
  return out.str();
}

class Reader {
 public:
  Reader(const CheckpointExtras& extras, std::string source) : source_(std::move(source)) {
    for (const auto& [key, value] : extras) entries_[key] = value;
  }

  const std::string& text(const std::string& key) const {
    const auto found = entries_.find(key);
    if (found == entries_.end()) {
      throw PolicyFileError(source_, 0, key, "this entry in the checkpoint", "none");
    }
    return found->second;
  }

  template <typename T>
  std::vector<T> numbers(const std::string& key) const {
    std::istringstream in(text(key));
    std::vector<T> values;
    for (T value; in >> value;) values.push_back(value);
    if (!in.eof()) throw PolicyFileError(source_, 0, key, "numbers", "'" + text(key) + "'");
    return values;
  }

  template <typename T>
  T number(const std::string& key) const {
    const std::vector<T> values = numbers<T>(key);
    if (values.size() != 1)
      throw PolicyFileError(source_, 0, key, "one number", "'" + text(key) + "'");
    return values.front();
  }

 private:
  std::string source_;
  std::map<std::string, std::string> entries_;
};

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
  return extras;
}

TrainerState from_extras(const CheckpointExtras& extras, const std::string& source) {
  const Reader reader(extras, source);
  if (reader.number<int>("format") != kCheckpointFormat) {
    throw PolicyFileError(source, 0, "format",
                          "checkpoint format " + std::to_string(kCheckpointFormat),
                          reader.text("format"));
  }
  TrainerState state;
  std::map<std::string, std::string> policy_files;
  for (const std::string& name : extra_file_names()) {
    policy_files[name] = reader.text("policy/" + name);
  }
  state.environment = from_extra_files(policy_files, source);
  state.features = reader.number<std::size_t>("features");
  state.hidden_sizes = reader.numbers<int>("hidden_sizes");
  state.seed = reader.number<std::uint64_t>("seed");
  state.updates = reader.number<std::int64_t>("updates");
  state.env_steps = reader.number<std::int64_t>("env_steps");
  state.observation_statistics = reader.text("observation_statistics");
  state.observation_clip = reader.number<float>("observation_clip");
  state.environments = reader.number<std::size_t>("environments");
  state.replay.seed = reader.number<std::uint64_t>("replay_seed");
  state.replay.actions = reader.numbers<int>("replay_actions");
  return state;
}

void export_checkpoint(const std::filesystem::path& checkpoint, const std::filesystem::path& out) {
  const TrainerState state = from_extras(PpoLearner::read_extras(checkpoint), checkpoint.string());
  PpoLearner learner(state.features, state.environment.actions.size(),
                     {.hidden_sizes = state.hidden_sizes});
  learner.load(checkpoint);
  RunningMeanStd statistics(state.features);
  if (!statistics.deserialize(state.observation_statistics)) {
    throw PolicyFileError(checkpoint.string(), 0, "observation_statistics",
                          "statistics of " + std::to_string(state.features) + " features",
                          "unreadable text");
  }
  save_torchscript_policy({.metadata = state.environment,
                           .observation_mean = statistics.float_mean(),
                           .observation_std = statistics.float_std(),
                           .observation_clip = state.observation_clip,
                           .layers = learner.actor_layers()},
                          out);
}

}  // namespace dynamix
