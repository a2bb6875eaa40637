// The typed error for bad input: names the source, the place in it, what was expected and found.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace dynamix {

/// Bad user input (a file, a CLI value). Its what() is one line a user can act on, control
/// characters escaped ("\n", "\x1b"):
/// "topologies/a.yaml:12: links[3].bandwidth_gbps: expected a number > 0, found -5".
class InputError : public std::runtime_error {
 public:
  /// `source`: a file name or "--option"; `line`: 1-based, 0 when unknown; `where`: a key path.
  InputError(std::string source, int line, std::string where, std::string expected,
             std::string found = {});

  const std::string& source() const { return source_; }
  int line() const { return line_; }
  const std::string& where() const { return where_; }
  const std::string& expected() const { return expected_; }
  const std::string& found() const { return found_; }

 private:
  std::string source_;
  int line_;
  std::string where_;
  std::string expected_;
  std::string found_;
};

/// Bad data as a short quotation for a one-line message: at most 40 characters, control
/// characters escaped, with the full length when cut ("'[1, 2, 3...' (5000 bytes)").
std::string excerpt(std::string_view text);

}  // namespace dynamix
