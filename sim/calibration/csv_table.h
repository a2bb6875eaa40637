// The calibration CSVs' common shape: '#' provenance lines, a header, rows of as many cells, each
// bad cell an InputError naming the file, line and column.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dynamix {

/// Column name -> index, from a header line.
using CsvColumns = std::map<std::string, std::size_t>;

/// The cells of one row by column name, with what is needed to name a bad one.
class CsvRow {
 public:
  CsvRow(const std::string& path, int line, const CsvColumns& columns,
         std::vector<std::string_view> fields);

  const std::string& path() const { return path_; }
  int line() const { return line_; }
  /// The cell's text, empty when the column is absent.
  std::string_view cell(const std::string& column) const;
  /// A finite number >= minimum (> minimum when `open`); nullopt for an empty optional cell.
  std::optional<double> number(const std::string& column, bool required, double minimum,
                               bool open) const;
  /// A whole number >= minimum and <= 1e9.
  int integer(const std::string& column, int minimum) const;
  /// A whole number >= minimum and <= 2^53 (counts of samples or iterations).
  std::int64_t count(const std::string& column, std::int64_t minimum) const;
  /// An InputError at this row's line naming `column`.
  [[noreturn]] void fail(const std::string& column, const std::string& expected,
                         const std::string& found) const;

 private:
  const std::string& path_;
  int line_;
  const CsvColumns& columns_;
  std::vector<std::string_view> fields_;
};

struct CsvScan {
  /// The '#' lines before the header, without the '#'.
  std::vector<std::string> provenance;
  /// Whether a header line was found.
  bool header = false;
  /// Lines read (the last line's number).
  int lines = 0;
  /// Data rows passed to the row callback.
  int rows = 0;
};

/// Reads `text`, the contents of `path`: blank lines are skipped, '#' lines before the header
/// are provenance, the first other line is the header (given to `on_header`, which throws to
/// refuse it), and each later line a row of as many cells as the header (an InputError
/// otherwise) given to `on_row`. Cells are comma-separated and trimmed; no quoting.
CsvScan scan_csv(const std::string& path, std::string_view text,
                 const std::function<void(const CsvColumns&, std::string_view, int)>& on_header,
                 const std::function<void(const CsvRow&)>& on_row);

}  // namespace dynamix
