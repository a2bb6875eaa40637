// scan_csv and read_csv: provenance, header, rows by column and position, and their errors.
#include "sim/io/csv_table.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/io/sources.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;

constexpr const char* kTable =
    "# measured on rig 2\n"
    "#  by hand\n"
    "\n"
    "kind, ranks\n"
    "allreduce,4\n"
    "# a comment between rows\n"
    "  iteration , 8\n";

struct Seen {
  std::string header;
  int header_line = 0;
  std::vector<std::string> rows;
};

CsvScan scan(const std::string& text, Seen& seen, const CsvFormat& format = {}) {
  return scan_csv(
      "t.csv", text,
      [&](const CsvColumns&, std::string_view line, int number) {
        seen.header = line;
        seen.header_line = number;
      },
      [&](const CsvRow& row) {
        seen.rows.push_back(std::to_string(row.line()) + " " + std::string(row.cell("kind")) + "|" +
                            std::string(row.field(1)) + "|" + std::string(row.field(2)));
      },
      format);
}

TEST_CASE("A CSV table gives its provenance, header and trimmed cells with their line numbers") {
  Seen seen;
  const CsvScan result = scan(kTable, seen);
  CHECK(result.provenance == std::vector<std::string>{"measured on rig 2", "by hand"});
  CHECK(result.header);
  CHECK(result.lines == 7);
  CHECK(result.rows == 2);
  CHECK(seen.header == "kind, ranks");
  CHECK(seen.header_line == 4);
  CHECK(seen.rows == std::vector<std::string>{"5 allreduce|4|", "7 iteration|8|"});
}

TEST_CASE("A row of another width than the header is refused at its line") {
  Seen seen;
  CHECK(error_of([&] { scan("a,b\n1,2\n1,2,3\n", seen); }) ==
        "t.csv:3: row: expected 2 comma-separated cells, found 3");
  CHECK(seen.rows.size() == 1);
}

TEST_CASE("A reader that names widths its own way gets every row, and '#' lines when asked") {
  Seen seen;
  const CsvScan result =
      scan("#kind,x\n1\n#2,3,4\n", seen, {.comments = false, .check_width = false});
  CHECK(result.provenance.empty());
  CHECK(seen.header == "#kind,x");
  CHECK(seen.rows == std::vector<std::string>{"2 ||", "3 |3|4"});
}

TEST_CASE("read_csv reads through read_text, embedded files and its errors included, any header") {
  int rows = 0;
  const CsvScan result =
      read_csv("embedded:/traces/diurnal_burst.csv", nullptr, [&](const CsvRow&) { ++rows; });
  CHECK(result.header);
  CHECK(rows == result.rows);
  CHECK(rows > 0);
  CHECK(error_of([] {
          read_csv(
              "embedded:/nope.csv", [](const CsvColumns&, std::string_view, int) {},
              [](const CsvRow&) {});
        }) == error_of([] { read_text("embedded:/nope.csv"); }));
}

}  // namespace
}  // namespace dynamix
