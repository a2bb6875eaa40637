// InputError message formatting.
#include "sim/io/input_error.h"

#include <sstream>
#include <utility>

namespace dynamix {
namespace {

std::string compose(const std::string& source, int line, const std::string& where,
                    const std::string& expected, const std::string& found) {
  std::ostringstream message;
  message << source;
  if (line > 0) message << ':' << line;
  if (!where.empty()) message << ": " << where;
  message << ": expected " << expected;
  if (!found.empty()) message << ", found " << found;
  return message.str();
}

}  // namespace

InputError::InputError(std::string source, int line, std::string where, std::string expected,
                       std::string found)
    : std::runtime_error(compose(source, line, where, expected, found)),
      source_(std::move(source)),
      line_(line),
      where_(std::move(where)) {}

}  // namespace dynamix
