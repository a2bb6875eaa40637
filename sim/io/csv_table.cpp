// Reading CSV files: rows, cells and their errors.
#include "sim/io/csv_table.h"

#include <charconv>
#include <cmath>
#include <sstream>

#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {

CsvRow::CsvRow(const std::string& path, int line, std::string_view text, const CsvColumns& columns,
               std::vector<std::string_view> fields)
    : path_(path), line_(line), text_(text), columns_(columns), fields_(std::move(fields)) {}

std::string_view CsvRow::field(std::size_t index) const {
  return index < fields_.size() ? fields_[index] : std::string_view{};
}

std::string_view CsvRow::cell(const std::string& column) const {
  const auto found = columns_.find(column);
  return found == columns_.end() ? std::string_view{} : field(found->second);
}

void CsvRow::fail(const std::string& column, const std::string& expected,
                  const std::string& found) const {
  throw InputError(path_, line_, column, expected, found);
}

std::optional<double> CsvRow::number(const std::string& column, bool required, double minimum,
                                     bool open) const {
  if (required && !columns_.contains(column)) {
    fail("header", "a column named '" + column + "' for this row", {});
  }
  const std::string_view text = cell(column);
  if (text.empty()) {
    if (required) fail(column, "a number", "an empty cell");
    return std::nullopt;
  }
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool parsed = error == std::errc{} && end == text.data() + text.size();
  if (!parsed || !std::isfinite(value) || value < minimum || (open && value == minimum)) {
    std::ostringstream expected;
    expected << "a finite number " << (open ? "> " : ">= ") << minimum;
    fail(column, expected.str(), excerpt(text));
  }
  return value;
}

int CsvRow::integer(const std::string& column, int minimum) const {
  const double value = *number(column, true, minimum, false);
  if (value != std::floor(value) || value > 1e9) {
    fail(column, "a whole number >= " + std::to_string(minimum), excerpt(cell(column)));
  }
  return static_cast<int>(value);
}

std::int64_t CsvRow::count(const std::string& column, std::int64_t minimum) const {
  constexpr double kLargestExact = 9007199254740992.0;  // 2^53
  const double value = *number(column, true, static_cast<double>(minimum), false);
  if (value != std::floor(value) || value > kLargestExact) {
    fail(column, "a whole number >= " + std::to_string(minimum), excerpt(cell(column)));
  }
  return static_cast<std::int64_t>(value);
}

CsvScan scan_csv(const std::string& path, std::string_view text, const CsvHeaderCallback& on_header,
                 const CsvRowCallback& on_row, const CsvFormat& format) {
  CsvScan scan;
  CsvColumns columns;
  std::size_t width = 0;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const auto newline = text.find('\n', begin);
    const std::string_view line = trim(text.substr(begin, newline - begin));
    begin = newline == std::string_view::npos ? text.size() : newline + 1;
    ++scan.lines;
    if (line.empty()) continue;
    if (format.comments && line.front() == '#') {
      if (!scan.header) scan.provenance.emplace_back(trim(line.substr(1)));
      continue;
    }
    auto fields = split_fields(line);
    if (!scan.header) {
      width = fields.size();
      scan.header = true;
      for (std::size_t i = 0; i < width; ++i) columns.emplace(std::string(fields[i]), i);
      if (on_header) on_header(columns, line, scan.lines);
      continue;
    }
    if (format.check_width && fields.size() != width) {
      throw InputError(path, scan.lines, "row", std::to_string(width) + " comma-separated cells",
                       std::to_string(fields.size()));
    }
    on_row(CsvRow(path, scan.lines, line, columns, std::move(fields)));
    ++scan.rows;
  }
  return scan;
}

CsvScan read_csv(const std::string& path, const CsvHeaderCallback& on_header,
                 const CsvRowCallback& on_row, const CsvFormat& format) {
  return scan_csv(path, read_text(path), on_header, on_row, format);
}

}  // namespace dynamix
