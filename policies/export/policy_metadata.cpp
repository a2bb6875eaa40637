// Policy metadata as extra files, and its check against an environment.
#include "policies/export/policy_metadata.h"

#include <yaml-cpp/yaml.h>

#include <climits>
#include <cstdint>
#include <sstream>

#include "sim/io/json_writer.h"

namespace dynamix {

namespace {

std::string json_of(const std::vector<int>& values) {
  std::ostringstream out;
  JsonWriter json(out);
  json.begin_array();
  for (int value : values) json.value(value);
  json.end_array();
  return out.str();
}

std::string list_text(std::span<const int> values) {
  std::string text = "[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(values[i]);
  }
  return text + "]";
}

std::string describe(const YAML::Node& node) {
  if (!node) return "nothing";
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return excerpt(node.Scalar());
    case YAML::NodeType::Sequence:
      return "a list of " + std::to_string(node.size());
    case YAML::NodeType::Map:
      return "an object";
    default:
      return "nothing";
  }
}

/// "where.key", or "key" at the top.
std::string key_path(const std::string& where, const std::string& key) {
  if (where.empty()) return key;
  std::string path = where;
  path += '.';
  path += key;
  return path;
}

// JSON is YAML's flow style, so yaml-cpp reads both schemas; the walk names the first place
// where they part.
void compare(const YAML::Node& environment, const YAML::Node& policy, const std::string& where,
             std::vector<Incompatibility>& out) {
  if (environment.Type() != policy.Type()) {
    out.push_back({where, describe(environment), describe(policy)});
    return;
  }
  if (environment.IsScalar()) {
    if (environment.Scalar() != policy.Scalar()) {
      out.push_back({where, describe(environment), describe(policy)});
    }
  } else if (environment.IsSequence()) {
    const std::size_t common = std::min(environment.size(), policy.size());
    for (std::size_t i = 0; i < common; ++i) {
      compare(environment[i], policy[i], where + "[" + std::to_string(i) + "]", out);
    }
    if (environment.size() != policy.size()) {
      out.push_back({where, std::to_string(environment.size()) + " entries",
                     std::to_string(policy.size()) + " entries"});
    }
  } else if (environment.IsMap()) {
    for (const auto& entry : environment) {
      const std::string key = entry.first.Scalar();
      const std::string path = key_path(where, key);
      if (!policy[key]) {
        out.push_back({path, describe(entry.second), "no such key"});
      } else {
        compare(entry.second, policy[key], path, out);
      }
    }
    for (const auto& entry : policy) {
      const std::string key = entry.first.Scalar();
      if (!environment[key]) {
        out.push_back({key_path(where, key), "no such key", describe(entry.second)});
      }
    }
  }
}

int parse_int(const std::string& text, const std::string& source, const std::string& where, int low,
              int high) {
  try {
    std::size_t used = 0;
    const long long value = std::stoll(text, &used);
    if (text.find_first_not_of(" \n", used) == std::string::npos && value >= low && value <= high) {
      return static_cast<int>(value);
    }
  } catch (const std::exception&) {
  }
  throw PolicyFileError(source, 0, where,
                        "an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]",
                        excerpt(text));
}

YAML::Node parse_json(const std::string& text, const std::string& source,
                      const std::string& where) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& error) {
    throw PolicyFileError(source, 0, where, "JSON", excerpt(error.msg));
  }
}

/// An integer scalar in [low, high], or PolicyFileError naming `where`.
int integer_in(const YAML::Node& node, int low, int high, const std::string& source,
               const std::string& where) {
  long long value = 0;
  if (!node || !node.IsScalar() || !YAML::convert<long long>::decode(node, value) || value < low ||
      value > high) {
    throw PolicyFileError(
        source, 0, where,
        "an integer in [" + std::to_string(low) + ", " + std::to_string(high) + "]",
        node && node.IsScalar() ? excerpt(node.Scalar()) : describe(node));
  }
  return static_cast<int>(value);
}

std::size_t schema_features(const YAML::Node& schema, const std::string& source) {
  if (!schema.IsMap() || !schema["local"] || !schema["local"].IsSequence() || !schema["global"] ||
      !schema["global"].IsSequence()) {
    throw PolicyFileError(source, 0, "schema.json", "an object with lists 'local' and 'global'",
                          describe(schema));
  }
  const std::size_t features = schema["local"].size() + schema["global"].size();
  if (features < 1 || features > kMaxPolicyFeatures) {
    throw PolicyFileError(source, 0, "schema.json",
                          "between 1 and " + std::to_string(kMaxPolicyFeatures) + " features",
                          std::to_string(features));
  }
  if (const YAML::Node declared = schema["features_per_worker"]) {
    const int count = integer_in(declared, 1, static_cast<int>(kMaxPolicyFeatures), source,
                                 "schema.json: features_per_worker");
    if (static_cast<std::size_t>(count) != features) {
      throw PolicyFileError(source, 0, "schema.json: features_per_worker",
                            std::to_string(features) + " (its local and global features)",
                            std::to_string(count));
    }
  }
  return features;
}

/// actions.json: 1 to kMaxPolicyActions distinct integers.
std::vector<int> read_actions(const std::string& text, const std::string& source) {
  const YAML::Node actions = parse_json(text, source, "actions.json");
  if (!actions.IsSequence() || actions.size() < 1 || actions.size() > kMaxPolicyActions) {
    throw PolicyFileError(source, 0, "actions.json",
                          "a list of 1 to " + std::to_string(kMaxPolicyActions) + " integers",
                          excerpt(text));
  }
  std::vector<int> out;
  for (std::size_t i = 0; i < actions.size(); ++i) {
    out.push_back(integer_in(actions[i], -kMaxPolicyBatch, kMaxPolicyBatch, source,
                             "actions.json[" + std::to_string(i) + "]"));
    for (std::size_t j = 0; j < i; ++j) {
      if (out[i] == out[j]) {
        throw PolicyFileError(source, 0, "actions.json[" + std::to_string(i) + "]",
                              "a batch change that no other action has",
                              "a second " + std::to_string(out[i]));
      }
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> extra_file_names() {
  return {"schema.json", "actions.json",      "action_base",
          "bounds.json", "decision_interval", "version"};
}

PolicyMetadata metadata_of(const BatchSizeEnv& env) {
  return {.schema_json = env.schema().to_json(),
          .actions = env.options().actions,
          .action_base = env.options().action_base,
          .min_batch = env.options().min_batch,
          .max_batch = env.options().max_batch,
          .decision_interval = env.options().decision_interval,
          .features = env.schema().features_per_worker()};
}

std::map<std::string, std::string> to_extra_files(const PolicyMetadata& metadata) {
  std::ostringstream bounds;
  JsonWriter json(bounds);
  json.begin_object();
  json.key("min_batch");
  json.value(metadata.min_batch);
  json.key("max_batch");
  json.value(metadata.max_batch);
  json.end_object();
  return {{"schema.json", metadata.schema_json},
          {"actions.json", json_of(metadata.actions)},
          {"action_base", std::string(action_base_name(metadata.action_base))},
          {"bounds.json", bounds.str()},
          {"decision_interval", std::to_string(metadata.decision_interval)},
          {"version", std::to_string(metadata.version)}};
}

PolicyMetadata from_extra_files(const std::map<std::string, std::string>& files,
                                const std::string& source) {
  for (const std::string& name : extra_file_names()) {
    const auto found = files.find(name);
    if (found == files.end() || found->second.empty()) {
      throw PolicyFileError(source, 0, name, "this extra file in the policy archive",
                            "none (not a dynamix policy?)");
    }
  }
  PolicyMetadata metadata;
  metadata.version = parse_int(files.at("version"), source, "version", 0, INT32_MAX);
  if (metadata.version != PolicyMetadata::kFormatVersion) {
    throw PolicyFileError(source, 0, "version",
                          "policy format " + std::to_string(PolicyMetadata::kFormatVersion),
                          std::to_string(metadata.version));
  }
  metadata.schema_json = files.at("schema.json");
  metadata.features =
      schema_features(parse_json(metadata.schema_json, source, "schema.json"), source);

  metadata.actions = read_actions(files.at("actions.json"), source);

  const YAML::Node bounds = parse_json(files.at("bounds.json"), source, "bounds.json");
  if (!bounds.IsMap()) {
    throw PolicyFileError(source, 0, "bounds.json", "an object {min_batch, max_batch}",
                          excerpt(files.at("bounds.json")));
  }
  metadata.min_batch =
      integer_in(bounds["min_batch"], 1, kMaxPolicyBatch, source, "bounds.json: min_batch");
  metadata.max_batch = integer_in(bounds["max_batch"], metadata.min_batch, kMaxPolicyBatch, source,
                                  "bounds.json: max_batch");

  const std::optional<ActionBase> base = parse_action_base(files.at("action_base"));
  if (!base) {
    throw PolicyFileError(source, 0, "action_base", "one of " + action_base_names(),
                          excerpt(files.at("action_base")));
  }
  metadata.action_base = *base;
  if (const std::optional<int> bad = invalid_action(metadata.action_base, metadata.actions)) {
    throw PolicyFileError(source, 0, "actions.json", action_rule(metadata.action_base),
                          "'" + std::to_string(*bad) + "'");
  }
  metadata.decision_interval = parse_int(files.at("decision_interval"), source, "decision_interval",
                                         1, kMaxDecisionInterval);
  return metadata;
}

std::vector<Incompatibility> incompatibilities(const PolicyMetadata& metadata,
                                               const std::string& schema_json,
                                               std::span<const int> actions) {
  std::vector<Incompatibility> out;
  if (metadata.schema_json != schema_json) {
    try {
      compare(YAML::Load(schema_json), YAML::Load(metadata.schema_json), "", out);
      for (Incompatibility& difference : out) {
        difference.where = "schema.json: " + difference.where;
        difference.expected += " (this environment)";
      }
    } catch (const YAML::Exception&) {
      out.push_back({"schema.json", "this environment's observation schema", "unreadable JSON"});
    }
  }
  if (!std::equal(actions.begin(), actions.end(), metadata.actions.begin(),
                  metadata.actions.end())) {
    out.push_back({"actions.json", list_text(actions) + " (this environment's action set)",
                   list_text(metadata.actions)});
  }
  return out;
}

void require_compatible(const PolicyMetadata& metadata, const std::string& schema_json,
                        std::span<const int> actions, const std::string& source) {
  const std::vector<Incompatibility> found = incompatibilities(metadata, schema_json, actions);
  if (found.empty()) return;
  std::string rest;
  if (found.size() > 1) rest = " (and " + std::to_string(found.size() - 1) + " more differences)";
  throw PolicyFileError(source, 0, found.front().where, found.front().expected,
                        found.front().found + rest);
}

}  // namespace dynamix
