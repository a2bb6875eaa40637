// A knob table on a command line: each row an option --KEY whose help line shows its meaning,
// unit and default as written, read back into the options struct through the row's checked
// parser.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <utility>
#include <vector>

#include "apps/command_line.h"
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
  /// What a value must satisfy, and where the default comes from, as the reference shows them.
  std::string range = {};
  std::string source = {};
};

/// How `knob` appears on a command line.
template <typename Target>
KnobOption knob_option(const Knob<Target>& knob) {
  return {knob.key,           knob.type,  knob.unit,  knob.meaning,
          knob.default_value, knob.range, knob.source};
}

/// A table's options, whatever its target.
template <typename Target>
std::vector<KnobOption> knob_options(const KnobTable<Target>& table) {
  std::vector<KnobOption> options;
  options.reserve(table.knobs.size());
  for (const Knob<Target>& knob : table.knobs) options.push_back(knob_option(knob));
  return options;
}

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

/// Adds every row of `table` to `options`, each with the default its row declares.
template <typename Target>
void add_knob_options(boost::program_options::options_description& options,
                      const KnobTable<Target>& table, const ShortNames& short_names = {}) {
  for (const Knob<Target>& knob : table.knobs)
    add_knob_option(options, knob_option(knob), short_names);
}

/// The short names every command gives its options of these keys.
inline const ShortNames kShortNames = {{"jobs", 'j'}, {"quiet", 'q'}};

/// A command's options: --help and every row of `table` (the table's meaning heads --help).
template <typename Target>
boost::program_options::options_description describe_knob_options(const KnobTable<Target>& table) {
  boost::program_options::options_description options(table.meaning);
  options.add_options()("help,h", "print this help");
  add_knob_options(options, table, kShortNames);
  return options;
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

/// Parses a command line of `table`'s options into `target`, range-checked; true when --help was
/// printed instead. `values`, when given, receives what was parsed (to tell given from default).
template <typename Target>
bool parse_knob_command_line(const std::vector<std::string>& args, const KnobTable<Target>& table,
                             Target& target,
                             boost::program_options::variables_map* values = nullptr) {
  boost::program_options::variables_map parsed;
  if (parse_command_line(args, describe_knob_options(table), parsed)) return true;
  read_knob_options(parsed, table, target);
  if (values != nullptr) *values = std::move(parsed);
  return false;
}

}  // namespace dynamix
