// Reading files from disk and from the embedded copies.
#include "sim/io/sources.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "sim/io/input_error.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

TEST_CASE("resolve_path resolves references beside their file, on disk and embedded") {
  CHECK(resolve_path("scenarios/a.yaml", "../topologies/t.yaml") == "topologies/t.yaml");
  CHECK(resolve_path("embedded:/scenarios/a.yaml", "../topologies/t.yaml") ==
        "embedded:/topologies/t.yaml");
  CHECK(resolve_path("scenarios/a.yaml", "/abs/t.yaml") == "/abs/t.yaml");
}

TEST_CASE("read_text names the missing file") {
  CHECK_THROWS_WITH_AS(
      read_text("/nonexistent/dir/x.yaml"),
      "/nonexistent/dir/x.yaml: expected a readable file, found No such file or directory",
      InputError);
  CHECK_THROWS_AS(read_text("embedded:/nope.yaml"), InputError);
}

TEST_CASE(
    "read_text refuses a file above the input bound before reading it; the variable moves it") {
  const testing::TempDirectory work;
  const std::string big = work.write("big.yaml", std::string((16 << 20) + 1, 'a'));
  CHECK_THROWS_WITH_AS(
      read_text(big),
      (big + ": expected a file of at most 16777216 bytes (DYNAMIX_MAX_INPUT_BYTES "
             "raises the limit), found 16777217 bytes")
          .c_str(),
      InputError);
  ::setenv(kMaxInputBytesVariable, "20000000", 1);
  CHECK(read_text(big).size() == (16 << 20) + 1);
  ::setenv(kMaxInputBytesVariable, "4", 1);
  CHECK_THROWS_WITH_AS(read_text(work.write("five.yaml", "a: 1\n")),
                       doctest::Contains("expected a file of at most 4 bytes"), InputError);
  ::setenv(kMaxInputBytesVariable, "4k", 1);
  CHECK_THROWS_WITH_AS(read_text(big),
                       "DYNAMIX_MAX_INPUT_BYTES: expected a number of bytes >= 1, found '4k'",
                       InputError);
  ::unsetenv(kMaxInputBytesVariable);
}

TEST_CASE("read_line stops at its limit however long the line, and tells a torn last line") {
  std::istringstream in("ab\n" + std::string(1000, 'x') + "\ntail");
  std::string line;
  CHECK(read_line(in, line, 8) == LineRead::kLine);
  CHECK(line == "ab");
  CHECK(read_line(in, line, 8) == LineRead::kTooLong);
  CHECK(line.size() == 8);
  std::istringstream rest("tail");
  CHECK(read_line(rest, line, 8) == LineRead::kUnterminated);
  CHECK(line == "tail");
  CHECK(read_line(rest, line, 8) == LineRead::kEnd);
}

TEST_CASE("every embedded file is readable through its embedded path") {
  for (const auto& path : embedded_paths()) {
    CHECK_FALSE(read_text(std::string(kEmbeddedPrefix) + path).empty());
  }
}

}  // namespace
}  // namespace dynamix
