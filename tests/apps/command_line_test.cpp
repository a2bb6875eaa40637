// Shared command-line plumbing: numbers rounded for people, --help defaults as written.
#include "apps/command_line.h"

#include <doctest/doctest.h>

#include <sstream>

namespace dynamix {
namespace {

TEST_CASE("Numbers for people keep 4 significant digits and no float noise") {
  CHECK(format_rounded(144.23456789) == "144.2");
  CHECK(format_rounded(82.6520267275) == "82.65");
  CHECK(format_rounded(0.00029999999999999997) == "0.0003");
  CHECK(format_rounded(0.94999999999999996) == "0.95");
  CHECK(format_rounded(-4.41234) == "-4.412");
  CHECK(format_rounded(12345.6) == "12350");
  CHECK(format_rounded(9999.96) == "10000");
  CHECK(format_rounded(128) == "128");
  CHECK(format_rounded(0) == "0");
  CHECK(format_rounded(1.5e-7) == "1.5e-07");
}

TEST_CASE("--help prints floating-point defaults as they were written") {
  float learning_rate = 3e-4f;
  double lambda = 0.95;
  boost::program_options::options_description options("test");
  options.add_options()("learning-rate", with_default(&learning_rate), "rate")(
      "gae-lambda", with_default(&lambda), "lambda");
  std::ostringstream help;
  help << options;
  CHECK(help.str().find("(=0.0003)") != std::string::npos);
  CHECK(help.str().find("(=0.95)") != std::string::npos);
  CHECK(help.str().find("0.000299") == std::string::npos);
}

}  // namespace
}  // namespace dynamix
