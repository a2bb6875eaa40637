// A configuration document kept as a value: what a run was configured with, recorded in its
// outputs (run.json, summary.json) and fingerprinted; its YAML representation stays in sim/io.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dynamix {

class JsonWriter;

/// An immutable tree of maps, lists and scalars. Copies share the tree; the `with` builders return
/// a new tree and leave this one unchanged.
class ConfigTree {
 public:
  /// An empty map.
  ConfigTree();

  /// The text of the scalar at a dotted path ("training.workload", "nodes.0.gpu"), if any.
  std::optional<std::string> text(std::string_view dotted_path) const;
  /// The tree as block-style YAML: the same bytes for the same tree.
  std::string to_yaml() const;
  /// The tree as JSON: maps, lists, and scalars (numbers and booleans unquoted).
  void write_json(JsonWriter& json) const;

  /// This map with `key` set (added at the end, or replaced in place).
  ConfigTree with(std::string_view key, std::string_view text) const;
  ConfigTree with(std::string_view key, double number) const;
  ConfigTree with(std::string_view key, std::uint64_t number) const;
  ConfigTree with(std::string_view key, const std::vector<std::string>& texts) const;
  ConfigTree with(std::string_view key, const ConfigTree& tree) const;

 private:
  friend class ConfigNode;
  struct Impl;
  explicit ConfigTree(std::shared_ptr<const Impl> impl);

  std::shared_ptr<const Impl> impl_;
};

}  // namespace dynamix
