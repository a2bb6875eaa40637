// Every options table of dynamix in one list: the environment's and PPO's, and each command's.
// dynamix config renders them (--markdown, --json), and the registry's test checks that no option
// is declared twice.
#pragma once

#include <string>
#include <vector>

#include "apps/knob_options.h"

namespace dynamix {

/// One table as the registry lists it, whatever struct its rows configure.
struct OptionTable {
  /// "env", "ppo", or the command ("train", "calibrate --dynamics").
  std::string name;
  /// Its heading in the reference ("`dynamix train`", "Environment").
  std::string title;
  /// The source file that declares the table's own rows.
  std::string where;
  /// One line: what the table configures.
  std::string meaning;
  std::vector<KnobOption> options;
};

/// The component tables first (env, ppo), then every command's, in the reference's order.
std::vector<OptionTable> option_tables();

}  // namespace dynamix
