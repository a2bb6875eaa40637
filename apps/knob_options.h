// A knob table on a command line: each row an option --KEY whose help line shows its meaning,
// unit and default as written, read back into the options struct through the row's checked
// parser.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <utility>
#include <vector>

#include "sim/io/knobs.h"

namespace dynamix {

/// How a row appears on the command line, whatever its target.
struct KnobOption {
  std::string key;
  std::string type;
  std::string unit;
  std::string meaning;
  /// As --help shows it; empty or "none" for none, "required" for an option that must be given.
  std::string default_value;
};

/// A short name for an option ("quiet" -> 'q').
using ShortNames = std::vector<std::pair<std::string, char>>;

/// Adds --KEY: flags that are off by default as switches, lists as repeatable options, the rest
/// as one value with its default shown.
void add_knob_option(boost::program_options::options_description& options, const KnobOption& option,
                     const ShortNames& short_names = {});

/// The text given to a row: each of a list's values, "true" for a switch that was given;
/// nothing when the option was not given.
std::vector<std::string> given_texts(const boost::program_options::variables_map& values,
                                     const std::string& key);

/// InputError for a value a row did not take: malformed as Boost.Program_options says it, out of
/// range as "--KEY: expected RANGE, found VALUE".
[[noreturn]] void refuse_knob_value(const std::string& key, const std::string& range,
                                    const std::string& text, const KnobParse& parse);

/// --strict, for commands that load scenarios: a value outside its key's typical range (a likely
/// unit slip) is an error (exit 2) instead of a warning. `Target` has a `bool strict`.
template <typename Target>
Knob<Target> strict_knob() {
  return KnobRows<Target>::flag(
      {.key = "strict",
       .meaning = "refuse implausible values (outside a key's typical range, e.g. a bandwidth "
                  "in Mb/s given as Gb/s) instead of warning about them",
       .recorded = false},
      [](auto& target) -> auto& { return target.strict; });
}

/// Adds every row of `table` to `options`, each with the default its row declares.
template <typename Target>
void add_knob_options(boost::program_options::options_description& options,
                      const KnobTable<Target>& table, const ShortNames& short_names = {}) {
  for (const Knob<Target>& knob : table.knobs) {
    add_knob_option(options, {knob.key, knob.type, knob.unit, knob.meaning, knob.default_value},
                    short_names);
  }
}

/// Reads every option of `table` given in `values` into `target`, in the table's order.
template <typename Target>
void read_knob_options(const boost::program_options::variables_map& values,
                       const KnobTable<Target>& table, Target& target) {
  for (const Knob<Target>& knob : table.knobs) {
    for (const std::string& text : given_texts(values, knob.key)) {
      const KnobParse parse = knob.parse(text, target);
      if (parse.outcome != KnobParse::Outcome::kStored) {
        refuse_knob_value(knob.key, knob.range, text, parse);
      }
    }
  }
}

}  // namespace dynamix
