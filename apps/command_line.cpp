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

std::string format_rounded(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return "0";
  const int magnitude = static_cast<int>(std::floor(std::log10(std::abs(value))));
  char buffer[64];
  if (magnitude < -4 || magnitude >= 15) {
    std::snprintf(buffer, sizeof buffer, "%.4g", value);
    return buffer;
  }
  // Round to 4 significant digits, then print without an exponent or trailing zeros.
  const double scale = std::pow(10.0, 3 - magnitude);
  const double rounded = std::round(value * scale) / scale;
  std::snprintf(buffer, sizeof buffer, "%.*f", std::max(0, 3 - magnitude), rounded);
  std::string text = buffer;
  if (text.find('.') != std::string::npos) {
    text.erase(text.find_last_not_of('0') + 1);
    if (text.back() == '.') text.pop_back();
  }
  return text == "-0" ? "0" : text;
}

bool parse_help_only(const std::vector<std::string>& args, const std::string& description) {
  po::options_description options(description);
  options.add_options()("help,h", "print this help");
  po::variables_map values;
  return parse_command_line(args, options, values);
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
