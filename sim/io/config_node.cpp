// ConfigNode: yaml-cpp behind checked reads with precise error locations.
#include "sim/io/config_node.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

#include "sim/io/closest_name.h"
#include "sim/io/config_tree_impl.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"

namespace dynamix {
namespace {

std::string type_name(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Scalar:
      return excerpt(node.Scalar());
  }
  return "something else";
}

std::vector<std::string> map_keys(const YAML::Node& map) {
  std::vector<std::string> keys;
  for (const auto& entry : map) keys.push_back(entry.first.as<std::string>());
  return keys;
}

std::vector<std::string> split_path(const std::string& dotted) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(dotted);
  while (std::getline(in, part, '.')) parts.push_back(part);
  return parts;
}

std::optional<std::size_t> parse_index(const std::string& text) {
  std::size_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

int line_of(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

/// Refuses duplicate keys (yaml-cpp keeps both and lookups find the first) and documents that
/// would take unbounded time to walk (nested aliases, "billion laughs").
void check_structure(const YAML::Node& node, const std::string& source, const std::string& path,
                     std::size_t& values) {
  if (++values > ConfigNode::kMaxValues) {
    throw InputError(source, line_of(node), path,
                     "a document of at most " + std::to_string(ConfigNode::kMaxValues) + " values",
                     "more");
  }
  const auto child = [&path](const std::string& key) {
    return path.empty() ? key : path + "." + key;
  };
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i) {
      check_structure(node[i], source, child(std::to_string(i)), values);
    }
  } else if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) {
        throw InputError(source, line_of(entry.first), path, "text keys", "a complex key");
      }
      const std::string& key = entry.first.Scalar();
      if (!seen.insert(key).second) {
        throw InputError(source, line_of(entry.first), child(key), "each key once in a map",
                         excerpt(key) + " again");
      }
      check_structure(entry.second, source, child(key), values);
    }
  }
}

/// Counts a document's values (not map keys) as the parser reads it, keeping nothing, so that a
/// file of too many, or of a second document, is refused before yaml-cpp builds a tree of about
/// 500 bytes a value. An alias counts once here; check_structure counts each use.
class ValueCounter : public YAML::EventHandler {
 public:
  explicit ValueCounter(const std::string& source) : source_(source) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) {
      throw InputError(source_, mark.line + 1, "", "one YAML document in the file", "a second one");
    }
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(mark);
    open_.push_back({.map = false});
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(mark);
    open_.push_back({.map = true});
  }
  void OnMapEnd() override { open_.pop_back(); }

 private:
  struct Collection {
    bool map;
    /// Nodes seen in it: in a map, keys and values alternate.
    std::size_t nodes = 0;
  };

  void node(const YAML::Mark& mark) {
    if (!open_.empty() && open_.back().map && open_.back().nodes++ % 2 == 0) return;
    if (++values_ > ConfigNode::kMaxValues) {
      throw InputError(
          source_, mark.line + 1, "",
          "a document of at most " + std::to_string(ConfigNode::kMaxValues) + " values", "more");
    }
  }

  const std::string& source_;
  int documents_ = 0;
  std::size_t values_ = 0;
  std::vector<Collection> open_;
};

}  // namespace

ConfigNode ConfigNode::parse(const std::string& text, const std::string& source) {
  YAML::Node root;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    ValueCounter counter(source);
    while (parser.HandleNextDocument(counter)) {
    }
    root = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    // A node name template like a100-{i} inside a {...} map ends the map early.
    const std::string hint =
        error.msg.find("flow") != std::string::npos
            ? " (inside a {...} map or [...] list a value with {, }, [, ] or a comma needs "
              "quotes, e.g. name: \"a100-{i}\")"
            : "";
    throw InputError(source, error.mark.is_null() ? 0 : error.mark.line + 1, "", "valid YAML",
                     error.msg + hint);
  }
  std::size_t values = 0;
  check_structure(root, source, "", values);
  return ConfigNode(root, std::make_shared<Document>(Document{source, {}}), "");
}

ConfigNode::ConfigNode(YAML::Node node, std::shared_ptr<Document> document, std::string path)
    : node_(std::move(node)), document_(std::move(document)), path_(std::move(path)) {}

ConfigNode& ConfigNode::operator=(const ConfigNode& other) {
  node_.reset(other.node_);
  document_ = other.document_;
  path_ = other.path_;
  return *this;
}

int ConfigNode::line() const {
  const YAML::Mark mark = node_.Mark();
  return mark.is_null() ? 0 : mark.line + 1;
}

std::string ConfigNode::child_path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

std::string ConfigNode::describe() const { return type_name(node_); }

void ConfigNode::fail(const std::string& expected) const { fail(expected, describe()); }

void ConfigNode::fail(const std::string& expected, const std::string& found) const {
  fail_at(path_, line(), expected, found);
}

std::string ConfigNode::origin() const {
  for (const auto& [overridden, origin] : document_->overrides) {
    if (path_ == overridden || path_.starts_with(overridden + ".")) return origin;
  }
  if (line() == 0) return document_->source;
  std::string text = document_->source;
  text += ':';
  text += std::to_string(line());
  return text;
}

void ConfigNode::fail_at(const std::string& path, int line, const std::string& expected,
                         const std::string& found) const {
  for (const auto& [overridden, origin] : document_->overrides) {
    if (path == overridden || path.starts_with(overridden + ".")) {
      throw InputError(origin, 0, path, expected, found);
    }
  }
  throw InputError(document_->source, line, path, expected, found);
}

bool ConfigNode::has(std::string_view key) const {
  return node_.IsMap() && node_[std::string(key)].IsDefined();
}

std::optional<ConfigNode> ConfigNode::find(std::string_view key) const {
  if (!node_.IsMap()) fail("a map");
  const YAML::Node child = node_[std::string(key)];
  if (!child.IsDefined() || child.IsNull()) return std::nullopt;
  return ConfigNode(child, document_, child_path(key));
}

ConfigNode ConfigNode::at(std::string_view key) const {
  if (!node_.IsMap()) fail("a map");
  const YAML::Node child = node_[std::string(key)];
  if (!child.IsDefined() || child.IsNull()) {
    throw InputError(document_->source, line(), child_path(key),
                     "a value for required key '" + std::string(key) + "'", "none");
  }
  return ConfigNode(child, document_, child_path(key));
}

std::vector<ConfigNode> ConfigNode::items() const {
  if (!node_.IsSequence()) fail("a list");
  std::vector<ConfigNode> result;
  result.reserve(node_.size());
  for (std::size_t i = 0; i < node_.size(); ++i) {
    result.push_back(ConfigNode(node_[i], document_, child_path(std::to_string(i))));
  }
  return result;
}

std::vector<std::string> ConfigNode::keys() const {
  if (!node_.IsMap()) fail("a map");
  std::vector<std::string> result;
  for (const auto& entry : node_) result.push_back(entry.first.as<std::string>());
  return result;
}

std::optional<ConfigNode> ConfigNode::find_path(std::string_view dotted_path) const {
  std::optional<ConfigNode> current = *this;
  for (const std::string& part : split_path(std::string(dotted_path))) {
    if (current->is_map()) {
      current = current->find(part);
    } else if (const auto index = parse_index(part);
               current->is_sequence() && index && *index < current->node_.size()) {
      current = current->items()[*index];
    } else {
      return std::nullopt;
    }
    if (!current) return std::nullopt;
  }
  return current;
}

ConfigTree ConfigNode::tree() const {
  return ConfigTree(std::make_shared<const ConfigTree::Impl>(ConfigTree::Impl{YAML::Clone(node_)}));
}

void ConfigNode::reject_unknown(std::initializer_list<std::string_view> known) const {
  reject_unknown(std::vector<std::string>(known.begin(), known.end()));
}

void ConfigNode::reject_unknown(const std::vector<std::string>& known) const {
  if (!node_.IsMap()) fail("a map");
  for (const auto& entry : node_) {
    const std::string key = entry.first.as<std::string>();
    bool found = false;
    for (const std::string& candidate : known) found = found || candidate == key;
    if (found) continue;
    std::string list;
    for (const std::string& candidate : known) list += (list.empty() ? "" : ", ") + candidate;
    const YAML::Mark mark = entry.first.Mark();
    fail_at(child_path(key), mark.is_null() ? line() : mark.line + 1,
            "one of the known keys (" + list + ")",
            "unknown key '" + key + "'" + did_you_mean(key, known));
  }
}

double ConfigNode::as_number() const {
  if (!node_.IsScalar()) fail("a number");
  const std::string& text = node_.Scalar();
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) {
    fail("a number");
  }
  return value;
}

std::int64_t ConfigNode::as_integer() const {
  if (!node_.IsScalar()) fail("an integer");
  const std::string& text = node_.Scalar();
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size()) fail("an integer");
  return value;
}

bool ConfigNode::as_bool() const {
  if (!node_.IsScalar()) fail("true or false");
  const std::string& text = node_.Scalar();
  if (text == "true") return true;
  if (text == "false") return false;
  fail("true or false");
}

std::string ConfigNode::as_text() const {
  if (!node_.IsScalar()) fail("a string");
  return node_.Scalar();
}

std::string ConfigNode::text_or(std::string_view key, std::string fallback) const {
  const auto child = find(key);
  return child ? child->as_text() : fallback;
}

bool ConfigNode::flag_or(std::string_view key, bool fallback) const {
  const auto child = find(key);
  return child ? child->as_bool() : fallback;
}

double ConfigNode::positive(std::string_view key) const {
  const ConfigNode child = at(key);
  const double value = child.as_number();
  if (!(value > 0)) child.fail("a number > 0");
  return value;
}

double ConfigNode::positive_or(std::string_view key, double fallback) const {
  return has(key) ? positive(key) : fallback;
}

double ConfigNode::fraction_or(std::string_view key, double fallback) const {
  const auto child = find(key);
  if (!child) return fallback;
  const double value = child->as_number();
  if (!(value >= 0 && value < 1)) {
    // 10 for 10%: the likely slip, said in the message.
    child->fail(value >= 1 && value <= 100
                    ? "a number in [0, 1), a fraction (" + format_number(value) + "% is " +
                          format_number(value / 100) + ")"
                    : std::string("a number in [0, 1)"));
  }
  return value;
}

double ConfigNode::at_least_or(std::string_view key, double minimum, double fallback) const {
  const auto child = find(key);
  if (!child) return fallback;
  const double value = child->as_number();
  if (!(value >= minimum)) {
    std::ostringstream expected;
    expected << "a number >= " << minimum;
    child->fail(expected.str());
  }
  return value;
}

int ConfigNode::int_or(std::string_view key, int minimum, int maximum, int fallback) const {
  const auto child = find(key);
  if (!child) return fallback;
  const std::int64_t value = child->as_integer();
  if (value < minimum || value > maximum) {
    child->fail("an integer in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]");
  }
  return static_cast<int>(value);
}

std::int64_t ConfigNode::count_or(std::string_view key, std::int64_t minimum,
                                  std::int64_t fallback) const {
  const auto child = find(key);
  if (!child) return fallback;
  const std::int64_t value = child->as_integer();
  if (value < minimum) child->fail("an integer >= " + std::to_string(minimum));
  return value;
}

void ConfigNode::set(const std::string& dotted_path, const std::string& value,
                     const std::string& origin, const std::string& written, bool add_maps) {
  const std::vector<std::string> parts = split_path(dotted_path);
  if (parts.empty()) throw InputError(origin, 0, dotted_path, "KEY=VALUE with a dotted key");
  YAML::Node current = node_;
  std::string walked = path_;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    const std::string here = walked.empty() ? part : walked + "." + part;
    if (part.empty()) throw InputError(origin, 0, dotted_path, "a dotted key without empty parts");
    YAML::Node next;
    if (current.IsSequence()) {
      const auto index = parse_index(part);
      if (!index || *index >= current.size()) {
        throw InputError(
            origin, 0, here,
            "an index below " + std::to_string(current.size()) + " in " + document_->source,
            "'" + part + "'");
      }
      next.reset(current[*index]);
    } else if (current.IsMap()) {
      const YAML::Node existing = current[part];
      if (add_maps && !last && (!existing.IsDefined() || existing.IsNull())) {
        current[part] = YAML::Node(YAML::NodeType::Map);
      }
      if (!current[part].IsDefined() && !last) {
        throw InputError(origin, 0, here, "an existing key in " + document_->source,
                         "no key '" + part + "'" + did_you_mean(part, map_keys(current)));
      }
      next.reset(current[part]);
    } else {
      throw InputError(origin, 0, here, "a map or list to descend into in " + document_->source,
                       type_name(current));
    }
    if (last) {
      YAML::Node parsed;
      try {
        parsed = YAML::Load(value);
      } catch (const YAML::Exception& error) {
        throw InputError(origin, 0, here, "a YAML value", error.msg);
      }
      if (!parsed.IsDefined() || parsed.IsNull()) {
        throw InputError(origin, 0, here, "a value after '='", excerpt(value));
      }
      std::size_t values = 0;
      check_structure(parsed, origin, here, values);
      if (current.IsSequence()) {
        current[*parse_index(part)] = parsed;
      } else {
        current[part] = parsed;
      }
      document_->overrides.emplace_back(
          here, origin + " " + (written.empty() ? dotted_path + "=" + value : written));
      return;
    }
    current.reset(next);
    walked = here;
  }
}

}  // namespace dynamix
