// RunDirectory and CsvWriter: a run directory appears complete or not at all; tidy CSV rows.
#include "apps/run_directory.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/check.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::TempDirectory;

namespace fs = std::filesystem;

std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t entries(const fs::path& directory) {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(directory)) ++count;
  return count;
}

TEST_CASE("a run directory that is never committed leaves nothing behind") {
  TempDirectory temp;
  {
    RunDirectory directory(temp.path() / "run");
    CsvWriter csv(directory.file("a.csv"), {"x"});
    csv << 1;
    csv.end_row();
    csv.close();
    CHECK(fs::exists(directory.file("a.csv")));
    CHECK_FALSE(fs::exists(temp.path() / "run"));
  }
  CHECK(entries(temp.path()) == 0);
}

TEST_CASE("committing a run directory moves its files into place and replaces an older run") {
  TempDirectory temp;
  const fs::path final_path = temp.path() / "run";
  fs::create_directories(final_path / "stale");
  {
    RunDirectory directory(final_path);
    std::ofstream(directory.file("summary.json")) << "{}";
    directory.commit();
  }
  CHECK(contents(final_path / "summary.json") == "{}");
  CHECK_FALSE(fs::exists(final_path / "stale"));
  CHECK(entries(temp.path()) == 1);
}

TEST_CASE("a CSV file has a header and rows of the same width, quoting only where needed") {
  TempDirectory temp;
  const fs::path file = temp.path() / "t.csv";
  CsvWriter csv(file, {"name", "count", "time_s"});
  csv << std::string_view("plain") << 3 << 0.25;
  csv.end_row();
  csv << std::string_view("a,b \"c\"") << std::int64_t{-1} << 1e-9;
  csv.end_row();
  csv.close();
  const std::string text = contents(file);
  CHECK(text.starts_with("name,count,time_s\nplain,3,0.25\n\"a,b \"\"c\"\"\",-1,"));
  CHECK(text.ends_with("\n"));
}

TEST_CASE("a CSV row with the wrong number of fields is an internal error") {
  TempDirectory temp;
  CsvWriter csv(temp.path() / "t.csv", {"a", "b"});
  csv << 1;
  CHECK_THROWS_AS(csv.end_row(), InvariantError);
}

}  // namespace
}  // namespace dynamix
