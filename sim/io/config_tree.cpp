// ConfigTree: a cloned YAML document behind a value type.
#include "sim/io/config_tree.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "sim/io/config_tree_impl.h"
#include "sim/io/json_writer.h"

namespace dynamix {
namespace {

void write_node(JsonWriter& json, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      json.begin_object();
      for (const auto& entry : node) {
        json.key(entry.first.Scalar());
        write_node(json, entry.second);
      }
      json.end_object();
      return;
    case YAML::NodeType::Sequence:
      json.begin_array();
      for (const auto& item : node) write_node(json, item);
      json.end_array();
      return;
    case YAML::NodeType::Scalar: {
      const std::string& text = node.Scalar();
      double number = 0;
      const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), number);
      if (error == std::errc{} && end == text.data() + text.size() && std::isfinite(number)) {
        json.value(number);
      } else if (text == "true" || text == "false") {
        json.value(text == "true");
      } else {
        json.value(std::string_view(text));
      }
      return;
    }
    default:
      json.null();
  }
}

/// A clone of `node` with `key` of its map set to `value`.
template <typename Value>
YAML::Node cloned_with(const YAML::Node& node, std::string_view key, const Value& value) {
  YAML::Node copy = YAML::Clone(node);
  copy[std::string(key)] = value;
  return copy;
}

}  // namespace

ConfigTree::ConfigTree()
    : impl_(std::make_shared<const Impl>(Impl{YAML::Node(YAML::NodeType::Map)})) {}

ConfigTree::ConfigTree(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

std::optional<std::string> ConfigTree::text(std::string_view dotted_path) const {
  YAML::Node current = impl_->node;
  std::istringstream parts{std::string(dotted_path)};
  std::string part;
  while (std::getline(parts, part, '.')) {
    YAML::Node next;
    if (current.IsMap()) {
      next.reset(current[part]);
    } else if (current.IsSequence()) {
      std::size_t index = 0;
      const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), index);
      if (error != std::errc{} || end != part.data() + part.size() || index >= current.size()) {
        return std::nullopt;
      }
      next.reset(current[index]);
    } else {
      return std::nullopt;
    }
    if (!next.IsDefined()) return std::nullopt;
    current.reset(next);
  }
  if (!current.IsScalar()) return std::nullopt;
  return current.Scalar();
}

std::string ConfigTree::to_yaml() const {
  YAML::Emitter emitter;
  emitter << impl_->node;
  return std::string(emitter.c_str(), emitter.size());
}

void ConfigTree::write_json(JsonWriter& json) const { write_node(json, impl_->node); }

ConfigTree ConfigTree::with(std::string_view key, std::string_view text) const {
  return ConfigTree(
      std::make_shared<const Impl>(Impl{cloned_with(impl_->node, key, std::string(text))}));
}

ConfigTree ConfigTree::with(std::string_view key, double number) const {
  return ConfigTree(std::make_shared<const Impl>(Impl{cloned_with(impl_->node, key, number)}));
}

ConfigTree ConfigTree::with(std::string_view key, std::uint64_t number) const {
  return ConfigTree(std::make_shared<const Impl>(Impl{cloned_with(impl_->node, key, number)}));
}

ConfigTree ConfigTree::with(std::string_view key, const std::vector<std::string>& texts) const {
  return ConfigTree(std::make_shared<const Impl>(Impl{cloned_with(impl_->node, key, texts)}));
}

ConfigTree ConfigTree::with(std::string_view key, const ConfigTree& tree) const {
  return ConfigTree(std::make_shared<const Impl>(
      Impl{cloned_with(impl_->node, key, YAML::Clone(tree.impl_->node))}));
}

}  // namespace dynamix
