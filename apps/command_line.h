// Shared command-line plumbing for the dynamix subcommands.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace dynamix {

inline constexpr const char* kDynamixVersion = "0.1.0";

/// Parses a subcommand's arguments; prints help and returns true when --help was asked.
/// Unknown or malformed options, stray positional arguments and options given an empty value
/// become an InputError naming the option.
bool parse_command_line(const std::vector<std::string>& args,
                        const boost::program_options::options_description& options,
                        boost::program_options::variables_map& values);

/// InputError on `option` unless minimum <= value <= maximum.
void require_in_range(const std::string& option, std::int64_t value, std::int64_t minimum,
                      std::int64_t maximum = std::numeric_limits<std::int64_t>::max());

}  // namespace dynamix
