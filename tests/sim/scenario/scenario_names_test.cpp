// Shipped scenarios named by their short name, and the validation set, both from the embedded
// files.
#include "sim/scenario/scenario_names.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>

#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;

TEST_CASE("every scenario in scenarios/ is built in under its file name") {
  const std::vector<std::string> names = builtin_scenario_names();
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(DYNAMIX_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    CAPTURE(entry.path());
    CHECK(std::count(names.begin(), names.end(), entry.path().stem().string()) == 1);
  }
  CHECK(names.size() == files);
  CHECK(std::is_sorted(names.begin(), names.end()));
}

TEST_CASE("a built-in scenario's short name resolves to its embedded file") {
  CHECK(resolve_scenario("hetero32") == "embedded:/scenarios/hetero32.yaml");
  CHECK(resolve_scenario("quickstart") == "embedded:/scenarios/quickstart.yaml");
}

TEST_CASE("paths, embedded paths and existing files are kept as given") {
  testing::TempDirectory work;
  const std::string own = work.write("hetero32", "name: mine\n");
  CHECK(resolve_scenario(own) == own);
  CHECK(resolve_scenario("embedded:/scenarios/lossy8.yaml") == "embedded:/scenarios/lossy8.yaml");
  CHECK(resolve_scenario("missing.yaml") == "missing.yaml");
  CHECK(resolve_scenario("dir/hetero32") == "dir/hetero32");
}

TEST_CASE("the validation set is every embedded validation scenario, smallest cluster first") {
  std::vector<std::string> expected;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::filesystem::path(DYNAMIX_SOURCE_DIR) / "scenarios" / "validation")) {
    const std::string file = entry.path().filename().string();
    if (file.ends_with(".yaml") && !file.ends_with(".topology.yaml"))
      expected.push_back("embedded:/scenarios/validation/" + file);
  }
  const std::vector<std::string> paths = validation_scenario_paths();
  CHECK(std::is_permutation(paths.begin(), paths.end(), expected.begin(), expected.end()));
  REQUIRE(paths.size() >= 2);
  CHECK(paths.front() == "embedded:/scenarios/validation/v4_extreme.yaml");
  CHECK(paths[1] == "embedded:/scenarios/validation/v16_lossy.yaml");
}

TEST_CASE("an unknown short name is refused, listing the built-in names") {
  const std::string message = error_of([] { resolve_scenario("hetero33", "--scenario"); });
  CHECK(message.starts_with("--scenario: "));
  CHECK(message.find("'hetero33'") != std::string::npos);
  for (const std::string& name : builtin_scenario_names()) {
    CAPTURE(name);
    CHECK(message.find(name) != std::string::npos);
  }
}

}  // namespace
}  // namespace dynamix
