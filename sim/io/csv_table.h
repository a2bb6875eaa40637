// Reading dynamix's CSV files: '#' provenance lines, a header, rows of cells, each bad cell an
// InputError naming the file, line and column.
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

/// The cells of one row, by column name or position, with what is needed to name a bad one.
class CsvRow {
 public:
  CsvRow(const std::string& path, int line, std::string_view text, const CsvColumns& columns,
         std::vector<std::string_view> fields);

  const std::string& path() const { return path_; }
  int line() const { return line_; }
  /// The whole line, trimmed.
  std::string_view text() const { return text_; }
  /// How many cells the row has.
  std::size_t size() const { return fields_.size(); }
  /// The cell at `index`, empty past the row's end.
  std::string_view field(std::size_t index) const;
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
  std::string_view text_;
  const CsvColumns& columns_;
  std::vector<std::string_view> fields_;
};

/// What a file's lines may hold besides the header and the rows.
struct CsvFormat {
  /// '#' lines before the header are provenance and later ones comments; without, a '#' line is
  /// a header or a row like any other (files whose readers always refused them).
  bool comments = true;
  /// Refuse a row with another number of cells than the header has; without, the row callback
  /// checks size() itself (files whose messages name the width their own way).
  bool check_width = true;
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

using CsvHeaderCallback = std::function<void(const CsvColumns&, std::string_view, int)>;
using CsvRowCallback = std::function<void(const CsvRow&)>;

/// Reads `text`, the contents of `path`: blank lines are skipped, '#' lines are provenance or
/// comments (CsvFormat::comments), the first other line is the header (given to `on_header`
/// with its line number, which throws to refuse it; an empty on_header takes any header), and
/// each later line a row given to
/// `on_row`, of as many cells as the header (CsvFormat::check_width; an InputError otherwise).
/// Cells are comma-separated and trimmed; no quoting.
CsvScan scan_csv(const std::string& path, std::string_view text, const CsvHeaderCallback& on_header,
                 const CsvRowCallback& on_row, const CsvFormat& format = {});
/// scan_csv on the file at `path`, read by read_text: "embedded:/" paths work, and a file over
/// the input bound is refused before it is read.
CsvScan read_csv(const std::string& path, const CsvHeaderCallback& on_header,
                 const CsvRowCallback& on_row, const CsvFormat& format = {});

}  // namespace dynamix
