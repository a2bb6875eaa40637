// Shared command-line plumbing for the dynamix subcommands.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "sim/io/json_writer.h"
#include "studies/version.h"

namespace dynamix {

/// Parses a subcommand's arguments; prints help and returns true when --help was asked.
/// Unknown or malformed options, stray positional arguments and options given an empty value
/// become an InputError naming the option.
bool parse_command_line(const std::vector<std::string>& args,
                        const boost::program_options::options_description& options,
                        boost::program_options::variables_map& values);

/// For commands whose only option is --help: prints `description` on --help, returns true.
bool parse_help_only(const std::vector<std::string>& args, const std::string& description);

/// Says `what` of a refused input on stderr as every command does ("dynamix: ..."), and returns
/// its exit status, 2.
int say_input_error(const std::exception& what);

/// InputError on `option` unless minimum <= value <= maximum.
void require_in_range(const std::string& option, std::int64_t value, std::int64_t minimum,
                      std::int64_t maximum = std::numeric_limits<std::int64_t>::max());

/// --family-budget, which `train --randomize` and `evaluate --family` share
/// (SamplerOptions::reference_budget_factor).
inline constexpr std::int64_t kMaxFamilyBudget = 100;
inline constexpr const char* kFamilyBudgetHelp =
    "reachable family samples: a reference job on each sample sets its target and a time "
    "budget of this many times its time to that target (docs/evaluation.md); 0 keeps the "
    "base's budget and the workloads' targets";

/// A default value for --help, shown rounded (0.0003, not 0.00029999999999999997).
template <typename T>
boost::program_options::typed_value<T>* with_default(T* target) {
  return boost::program_options::value(target)->default_value(
      *target, format_rounded(static_cast<double>(*target)));
}

}  // namespace dynamix
