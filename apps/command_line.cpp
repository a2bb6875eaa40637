// parse_command_line: Boost.Program_options errors as one-line InputErrors.
#include "apps/command_line.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "sim/io/input_error.h"

namespace dynamix {

namespace po = boost::program_options;

namespace {

void refuse_empty_values(const po::variables_map& values) {
  for (const auto& [name, value] : values) {
    if (value.defaulted()) continue;
    const auto* text = boost::any_cast<std::string>(&value.value());
    const auto* texts = boost::any_cast<std::vector<std::string>>(&value.value());
    if ((text && text->empty()) ||
        (texts && std::find(texts->begin(), texts->end(), "") != texts->end())) {
      throw InputError("--" + name, 0, "", "a value", "an empty one");
    }
  }
}

}  // namespace

bool parse_help_only(const std::vector<std::string>& args, const std::string& description) {
  po::options_description options(description);
  options.add_options()("help,h", "print this help");
  po::variables_map values;
  return parse_command_line(args, options, values);
}

int say_input_error(const std::exception& what) {
  std::cerr << "dynamix: " << what.what() << std::endl;
  return 2;
}

void require_in_range(const std::string& option, std::int64_t value, std::int64_t minimum,
                      std::int64_t maximum) {
  if (value >= minimum && value <= maximum) return;
  std::string expected = "an integer >= " + std::to_string(minimum);
  if (maximum != std::numeric_limits<std::int64_t>::max()) {
    expected = "an integer in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]";
  }
  throw InputError(option, 0, "", expected, std::to_string(value));
}

bool parse_command_line(const std::vector<std::string>& args,
                        const po::options_description& options, po::variables_map& values) {
  try {
    // Positional arguments are collected only to be named in the error.
    po::options_description with_stray;
    with_stray.add(options).add_options()("stray-argument", po::value<std::vector<std::string>>());
    po::positional_options_description stray;
    stray.add("stray-argument", -1);
    po::store(po::command_line_parser(args).options(with_stray).positional(stray).run(), values);
    if (values.count("help")) {
      std::cout << options << '\n';
      return true;
    }
    if (values.count("stray-argument")) {
      throw InputError(
          "command line", 0, "", "options only (see --help)",
          "the argument " +
              excerpt(values["stray-argument"].as<std::vector<std::string>>().front()));
    }
    refuse_empty_values(values);
    po::notify(values);
  } catch (const po::error& error) {
    throw InputError("command line", 0, "", "valid options (see --help)", error.what());
  }
  return false;
}

}  // namespace dynamix
