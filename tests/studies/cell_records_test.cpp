// CellRecords: a record counts only once committed, and reads back byte for byte.
#include "studies/cell_records.h"

#include <doctest/doctest.h>

#include <fstream>

#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::TempDirectory;

TEST_CASE("CellRecords shows a record only after commit, with the bytes staged") {
  TempDirectory work;
  const CellRecords records(work.path() / "episodes");
  CHECK(!records.read(3).has_value());
  std::ofstream(records.staging(3), std::ios::binary) << "a,b\n1,\"x,y\"\n";
  CHECK(!records.read(3).has_value());
  records.commit(3);
  CHECK(records.read(3) == "a,b\n1,\"x,y\"\n");
  CHECK(!std::filesystem::exists(records.staging(3)));
  CHECK(!records.read(2).has_value());
}

TEST_CASE("CellRecords::write makes a record count at once, replacing a staged one") {
  TempDirectory work;
  const CellRecords records(work.path() / "episodes");
  std::ofstream(records.staging(7), std::ios::binary) << "partial";
  records.write(7, "a,b\n1,2\n");
  CHECK(records.read(7) == "a,b\n1,2\n");
  CHECK(!std::filesystem::exists(records.staging(7)));
}

TEST_CASE("write_durably replaces a file whole and leaves no temporary file") {
  TempDirectory work;
  const std::filesystem::path file = work.path() / "run.json";
  write_durably(file, "first");
  write_durably(file, "second");
  std::ifstream in(file);
  std::string text;
  std::getline(in, text);
  CHECK(text == "second");
  CHECK(std::distance(std::filesystem::directory_iterator(work.path()), {}) == 1);
}

TEST_CASE("write_durably names the file it cannot write") {
  TempDirectory work;
  const std::string message =
      testing::error_of([&] { write_durably(work.path() / "missing" / "run.json", "x"); });
  CHECK(message.find("missing/run.json") != std::string::npos);
}

}  // namespace
}  // namespace dynamix
