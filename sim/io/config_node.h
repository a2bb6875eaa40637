// Typed, validated access to a YAML document that names the file, line and key of every error.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/io/config_tree.h"

namespace dynamix {

/// The longest single duration a configuration may give (about 11.6 days).
inline constexpr double kMaxInputSeconds = 1e6;

/// A node of a parsed configuration file. Reads are typed and checked: anything unexpected
/// throws InputError naming the file, line and dotted key path ("links.2.bandwidth_gbps",
/// the same path `--set` takes).
class ConfigNode {
 public:
  static constexpr std::size_t kMaxValues = 1'000'000;
  /// Parses YAML text; a syntax error, a key given twice in one map, or a document of more than
  /// kMaxValues values (aliases counted each time they are used) is an InputError naming
  /// `source` and the line.
  static ConfigNode parse(const std::string& text, const std::string& source);

  ConfigNode(const ConfigNode&) = default;
  ConfigNode(ConfigNode&&) = default;
  /// Assignment rebinds this node to `other`'s (YAML::Node's own assignment would overwrite the
  /// value this node refers to, inside its document).
  ConfigNode& operator=(const ConfigNode& other);
  ConfigNode& operator=(ConfigNode&& other) { return *this = other; }

  const std::string& source() const { return document_->source; }
  const std::string& path() const { return path_; }
  /// 1-based line of this node in its file, 0 when unknown.
  int line() const;
  /// Where this value came from, as messages name it: "FILE:LINE", or the override that set it
  /// ("--set topology.nodes.0.gpu=V100").
  std::string origin() const;

  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  bool has(std::string_view key) const;

  /// The value under a required key of this map.
  ConfigNode at(std::string_view key) const;
  /// The value under a key, if present.
  std::optional<ConfigNode> find(std::string_view key) const;
  /// The value at a dotted path below this node ("sync.servers", "nodes.0.gpu"), if present.
  std::optional<ConfigNode> find_path(std::string_view dotted_path) const;
  /// The elements of this sequence.
  std::vector<ConfigNode> items() const;
  /// The keys of this map, in file order.
  std::vector<std::string> keys() const;

  /// Fails if this map holds a key not in `known`, listing the known ones.
  void reject_unknown(std::initializer_list<std::string_view> known) const;
  void reject_unknown(const std::vector<std::string>& known) const;

  /// This scalar as a value; a wrong type is an InputError.
  double as_number() const;
  std::int64_t as_integer() const;
  bool as_bool() const;
  std::string as_text() const;

  double number(std::string_view key) const { return at(key).as_number(); }
  std::int64_t integer(std::string_view key) const { return at(key).as_integer(); }
  std::string text(std::string_view key) const { return at(key).as_text(); }
  std::string text_or(std::string_view key, std::string fallback) const;
  bool flag_or(std::string_view key, bool fallback) const;

  /// Checked reads: a number > 0; in [0, 1); >= minimum; an integer >= minimum.
  double positive(std::string_view key) const;
  double positive_or(std::string_view key, double fallback) const;
  double fraction_or(std::string_view key, double fallback) const;
  double at_least_or(std::string_view key, double minimum, double fallback) const;
  std::int64_t count_or(std::string_view key, std::int64_t minimum, std::int64_t fallback) const;
  /// An integer in [minimum, maximum], read as int64 and checked before it becomes an int.
  int int_or(std::string_view key, int minimum, int maximum, int fallback) const;

  /// Throws the InputError for this node: "expected <expected>, found <this value>"; a value
  /// that came from set() is blamed on its origin instead of the file.
  [[noreturn]] void fail(const std::string& expected) const;
  [[noreturn]] void fail(const std::string& expected, const std::string& found) const;

  /// A copy of this node's subtree that later set() calls leave unchanged.
  ConfigTree tree() const;

  /// Overrides the value at a dotted path below this node ("links.0.bandwidth_gbps"). The path
  /// must exist, except that its last key may be new in a map and, with `add_maps`, the maps
  /// leading to it may be new too. `origin` names the override in errors (e.g. "--set"),
  /// followed by the assignment as the user wrote it (`written`, by default
  /// "dotted_path=value").
  void set(const std::string& dotted_path, const std::string& value, const std::string& origin,
           const std::string& written = {}, bool add_maps = false);

 private:
  /// The file, and the values set() put into it (path, origin).
  struct Document {
    std::string source;
    std::vector<std::pair<std::string, std::string>> overrides;
  };
  ConfigNode(YAML::Node node, std::shared_ptr<Document> document, std::string path);
  std::string child_path(std::string_view key) const;
  std::string describe() const;
  [[noreturn]] void fail_at(const std::string& path, int line, const std::string& expected,
                            const std::string& found) const;

  YAML::Node node_;
  std::shared_ptr<Document> document_;
  std::string path_;
};

}  // namespace dynamix
