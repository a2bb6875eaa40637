// Reading files from disk and from the embedded copies.
#include "sim/io/sources.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "sim/io/input_error.h"

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

TEST_CASE("every embedded file is readable through its embedded path") {
  for (const auto& path : embedded_paths()) {
    CHECK_FALSE(read_text(std::string(kEmbeddedPrefix) + path).empty());
  }
}

}  // namespace
}  // namespace dynamix
