// The knob rows' ranges and the number texts they parse and show.
#include "sim/io/knobs.h"

#include <algorithm>
#include <charconv>
#include <iomanip>
#include <sstream>

namespace dynamix {

bool Range::contains(double value) const {
  if (finite && !std::isfinite(value)) return false;
  return (low_open ? value > low : value >= low) && (high_open ? value < high : value <= high);
}

std::string Range::expected() const {
  std::ostringstream text;
  if (integer) text << std::fixed << std::setprecision(0);
  text << (integer                        ? "an integer "
           : finite && high == kUnbounded ? "a finite number "
                                          : "a number ");
  if (high == kUnbounded) {
    text << (low_open ? "> " : ">= ") << low;
  } else {
    text << "in " << (low_open ? '(' : '[') << low << ", " << high << (high_open ? ')' : ']');
  }
  return text.str();
}

Range integers(double low, double high) { return {.low = low, .high = high, .integer = true}; }

double read_in(const ConfigNode& section, std::string_view key, const Range& range, double fallback,
               std::string_view note) {
  const auto child = section.find(key);
  if (!child) return fallback;
  const double value =
      range.integer ? static_cast<double>(child->as_integer()) : child->as_number();
  if (!range.contains(value)) child->fail(range.expected() + std::string(note));
  return value;
}

std::optional<std::string> implausibility(const std::string& key, double value,
                                          const std::string& unit, const Typical& typical) {
  if (typical.contains(value)) return std::nullopt;
  const bool above = value > typical.high;
  std::string text = key;
  text += ' ';
  text += format_number(value);
  text += " is ";
  text += above ? typical.above : typical.below;
  text += above ? " (\u2264 " : " (\u2265 ";
  text += format_number(above ? typical.high : typical.low);
  if (!unit.empty()) text += " " + unit;
  if (!typical.hint.empty()) text += ", " + typical.hint;
  text += ')';
  for (const double slip : typical.slips) {
    const double meant = value / slip;
    if (typical.contains(meant)) return text + "; did you mean " + format_number(meant) + "?";
  }
  return text;
}

std::string exact_number(double value) {
  char text[64];
  auto [end, error] = std::to_chars(text, text + sizeof(text), value, std::chars_format::fixed);
  if (error != std::errc()) end = std::to_chars(text, text + sizeof(text), value).ptr;
  return {text, end};
}

std::optional<double> parse_number(const std::string& text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string snake_case(std::string key) {
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

std::optional<long long> parse_integer(const std::string& text) {
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace dynamix
