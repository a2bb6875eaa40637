// Knob rows as Boost.Program_options options.
#include "apps/knob_options.h"

#include "sim/io/input_error.h"

namespace dynamix {

namespace po = boost::program_options;

namespace {

constexpr std::size_t kLongestInlineDefault = 24;

}  // namespace

void add_knob_option(po::options_description& options, const KnobOption& option,
                     const ShortNames& short_names) {
  std::string name = option.key;
  for (const auto& [key, letter] : short_names) {
    if (key == option.key) name += std::string(",") + letter;
  }
  std::string help =
      option.unit.empty() ? option.meaning : option.meaning + " (" + option.unit + ")";
  if (option.type == "list") help += " (repeatable)";
  std::string shown = option.default_value;
  // A long default would widen the option column for every line; it goes with the help instead.
  if (shown.size() > kLongestInlineDefault && shown != "required") {
    help += " (default: " + shown + ")";
    shown.clear();
  }
  if (option.type == "true or false" && shown != "true") {
    options.add_options()(name.c_str(), po::bool_switch(), help.c_str());
  } else if (option.type == "list") {
    options.add_options()(name.c_str(), po::value<std::vector<std::string>>()->composing(),
                          help.c_str());
  } else if (shown == "required") {
    options.add_options()(name.c_str(), po::value<std::string>()->required(), help.c_str());
  } else if (shown.empty() || shown == "none") {
    options.add_options()(name.c_str(), po::value<std::string>(), help.c_str());
  } else {
    options.add_options()(name.c_str(), po::value<std::string>()->default_value(shown, shown),
                          help.c_str());
  }
}

std::vector<std::string> given_texts(const po::variables_map& values, const std::string& key) {
  const auto found = values.find(key);
  if (found == values.end() || found->second.defaulted()) return {};
  const boost::any& value = found->second.value();
  if (const auto* texts = boost::any_cast<std::vector<std::string>>(&value)) return *texts;
  if (const auto* text = boost::any_cast<std::string>(&value)) return {*text};
  if (const auto* given = boost::any_cast<bool>(&value)) {
    return *given ? std::vector<std::string>{"true"} : std::vector<std::string>{};
  }
  return {};
}

void refuse_knob_value(const std::string& key, const std::string& range, const std::string& text,
                       const KnobParse& parse) {
  if (parse.outcome == KnobParse::Outcome::kMalformed) {
    // Boost.Program_options' own words, as when the option was parsed into its type.
    throw InputError("command line", 0, "", "valid options (see --help)",
                     "the argument ('" + text + "') for option '--" + key + "' is invalid");
  }
  throw InputError("--" + key, 0, "", range, parse.found);
}

}  // namespace dynamix
