// A small streaming JSON writer for run outputs (summary.json, schemas), deterministic bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace dynamix {

class ConfigTree;

/// Writes pretty-printed JSON; keys appear in the order written. Numbers use up to 12
/// significant digits so outputs are byte-identical across runs.
class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}
  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  void key(std::string_view name);
  void value(double number);
  void value(std::int64_t number);
  void value(int number) { value(static_cast<std::int64_t>(number)); }
  void value(std::size_t number) { value(static_cast<std::int64_t>(number)); }
  void value(bool flag);
  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(const std::optional<double>& number);
  void null();
  /// A configuration tree as JSON: maps, lists, and scalars (numbers and booleans unquoted).
  void value(const ConfigTree& tree);

 private:
  void before_value();
  void write_string(std::string_view text);
  void newline();

  std::ostream& out_;
  std::vector<bool> first_in_scope_;
  bool after_key_ = false;
};

/// A number formatted the way every dynamix output file formats it.
std::string format_number(double number);
/// `value` rounded to 4 significant digits for people to read (stdout, stderr, --help);
/// output files keep full precision through format_number.
std::string format_rounded(double value);
/// `value` as one CSV field (RFC 4180): as it is, or quoted with its quotes doubled when it holds
/// a comma, a quote or a line break.
std::string csv_field(std::string_view value);

}  // namespace dynamix
