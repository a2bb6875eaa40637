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
      where_(std::move(where)),
      expected_(std::move(expected)),
      found_(std::move(found)) {}

std::string excerpt(std::string_view text) {
  constexpr std::size_t kShown = 40;
  std::string shown = "'";
  for (std::size_t i = 0; i < text.size() && i < kShown; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      shown += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      shown += '?';
    } else {
      shown += static_cast<char>(c);
    }
  }
  shown += "'";
  if (text.size() > kShown) shown.insert(shown.size() - 1, "...");
  if (text.size() > kShown) shown += " (" + std::to_string(text.size()) + " bytes)";
  return shown;
}

}  // namespace dynamix
