// InputError message formatting.
#include "sim/io/input_error.h"

#include <sstream>
#include <utility>

namespace dynamix {
namespace {

/// Control characters as escapes, so that a message stays one line and sends the terminal no
/// commands.
std::string escaped(std::string_view text) {
  std::string shown;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      shown += "\\n";
    } else if (c == '\t') {
      shown += "\\t";
    } else if (c == '\r') {
      shown += "\\r";
    } else if (byte < 0x20 || byte == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      shown += {'\\', 'x', kHex[byte >> 4], kHex[byte & 0xf]};
    } else {
      shown += c;
    }
  }
  return shown;
}

std::string compose(const std::string& source, int line, const std::string& where,
                    const std::string& expected, const std::string& found) {
  std::ostringstream message;
  message << escaped(source);
  if (line > 0) message << ':' << line;
  if (!where.empty()) message << ": " << escaped(where);
  message << ": expected " << escaped(expected);
  if (!found.empty()) message << ", found " << escaped(found);
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
  shown += escaped(text.substr(0, kShown));
  if (text.size() <= kShown) return shown + "'";
  return shown + "...' (" + std::to_string(text.size()) + " bytes)";
}

}  // namespace dynamix
