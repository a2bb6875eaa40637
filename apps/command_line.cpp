// parse_command_line: Boost.Program_options errors as one-line InputErrors.
#include "apps/command_line.h"

#include <iostream>

#include "sim/io/input_error.h"

namespace dynamix {

namespace po = boost::program_options;

bool parse_command_line(const std::vector<std::string>& args,
                        const po::options_description& options, po::variables_map& values) {
  try {
    po::store(po::command_line_parser(args).options(options).run(), values);
    if (values.count("help")) {
      std::cout << options << '\n';
      return true;
    }
    po::notify(values);
  } catch (const po::error& error) {
    throw InputError("command line", 0, "", "valid options (see --help)", error.what());
  }
  return false;
}

}  // namespace dynamix
