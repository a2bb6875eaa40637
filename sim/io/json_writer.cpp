// JsonWriter implementation.
#include "sim/io/json_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/io/config_tree.h"

namespace dynamix {

std::string format_number(double number) {
  if (!std::isfinite(number)) return "null";
  if (number == 0) return "0";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.12g", number);
  return buffer;
}

void JsonWriter::newline() {
  out_ << '\n';
  for (std::size_t i = 0; i < first_in_scope_.size(); ++i) out_ << "  ";
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_in_scope_.empty()) {
    if (!first_in_scope_.back()) out_ << ',';
    first_in_scope_.back() = false;
    newline();
  }
}

void JsonWriter::begin_object() {
  before_value();
  out_ << '{';
  first_in_scope_.push_back(true);
}

void JsonWriter::end_object() {
  const bool empty = first_in_scope_.back();
  first_in_scope_.pop_back();
  if (!empty) newline();
  out_ << '}';
  if (first_in_scope_.empty()) out_ << '\n';
}

void JsonWriter::begin_array() {
  before_value();
  out_ << '[';
  first_in_scope_.push_back(true);
}

void JsonWriter::end_array() {
  const bool empty = first_in_scope_.back();
  first_in_scope_.pop_back();
  if (!empty) newline();
  out_ << ']';
}

void JsonWriter::key(std::string_view name) {
  before_value();
  write_string(name);
  out_ << ": ";
  after_key_ = true;
}

void JsonWriter::value(double number) {
  before_value();
  out_ << format_number(number);
}

void JsonWriter::value(std::int64_t number) {
  before_value();
  out_ << number;
}

void JsonWriter::value(bool flag) {
  before_value();
  out_ << (flag ? "true" : "false");
}

void JsonWriter::value(const std::optional<double>& number) {
  if (number) {
    value(*number);
  } else {
    null();
  }
}

void JsonWriter::null() {
  before_value();
  out_ << "null";
}

void JsonWriter::value(std::string_view text) {
  before_value();
  write_string(text);
}

void JsonWriter::write_string(std::string_view text) {
  out_ << '"';
  for (const char c : text) {
    switch (c) {
      case '"':
        out_ << "\\\"";
        break;
      case '\\':
        out_ << "\\\\";
        break;
      case '\n':
        out_ << "\\n";
        break;
      case '\t':
        out_ << "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
          out_ << escaped;
        } else {
          out_ << c;
        }
    }
  }
  out_ << '"';
}

void JsonWriter::value(const ConfigTree& tree) { tree.write_json(*this); }

std::string csv_field(std::string_view value) {
  if (value.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(value);
  std::string quoted = "\"";
  for (const char c : value) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + '"';
}

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

}  // namespace dynamix
