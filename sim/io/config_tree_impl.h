// ConfigTree's representation, shared by the sim/io sources that build trees from YAML.
#pragma once

#include <yaml-cpp/yaml.h>

#include "sim/io/config_tree.h"

namespace dynamix {

struct ConfigTree::Impl {
  /// Never shared with a node that can still change: trees are built from clones.
  YAML::Node node;
};

}  // namespace dynamix
