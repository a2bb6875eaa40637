// `dynamix config`: every declared key listed, scenario values resolved, --set adding a section
// a scenario omits, and docs/configuration.md kept in step with the tables.
#include "apps/config.h"

#include <doctest/doctest.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <string>

#include "sim/scenario/scenario_knobs.h"
#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using testing::contents;
using testing::dynamix;
using testing::kSourceDir;
using testing::quoted;
using testing::TempDirectory;

TEST_CASE("docs/configuration.md is what dynamix config --markdown prints") {
  std::ostringstream generated;
  print_configuration_markdown(generated);
  // On failure: dynamix config --markdown > docs/configuration.md
  CHECK(contents(kSourceDir / "docs" / "configuration.md") == generated.str());
}

TEST_CASE("dynamix config lists every declared key with its default and range") {
  const testing::Outcome outcome = dynamix("config");
  REQUIRE(outcome.status == 0);
  std::size_t keys = 0;
  for (const ScenarioKnobTable& table : scenario_knobs()) {
    for (const ScenarioKnob& knob : table.knobs) {
      CAPTURE(knob.key);
      CHECK(outcome.stdout_text.find("  " + knob.key + " = " + knob.default_value) !=
            std::string::npos);
      CHECK(!knob.meaning.empty());
      ++keys;
    }
  }
  CHECK(keys >= 30);
  CHECK(outcome.stdout_text.find("network.max_window_kb = 4096 KiB  (a number > 0)") !=
        std::string::npos);
  CHECK(outcome.stdout_text.find("network.min_available_fraction") != std::string::npos);
}

TEST_CASE("dynamix config --scenario shows the values a scenario resolves to") {
  const testing::Outcome outcome =
      dynamix("config --scenario quickstart --set network.mss_bytes=9000");
  REQUIRE(outcome.status == 0);
  CHECK(outcome.stdout_text.find("network.mss_bytes = 9000 bytes  (default 1460 bytes;") !=
        std::string::npos);
  CHECK(outcome.stdout_text.find("training.budget_time_s = 300 s") != std::string::npos);
  CHECK(outcome.stdout_text.find("name = quickstart") != std::string::npos);
}

TEST_CASE("--set adds a section the scenario omits, and its errors name --set") {
  TempDirectory work;
  // quickstart has no network: or variability: section.
  const testing::Outcome outcome = dynamix(
      "simulate --iterations 5 --set network.incast=false --set variability.gpu_spread=0 "
      "--out " +
      quoted(work / "run"));
  REQUIRE_MESSAGE(outcome.status == 0, outcome.stderr_text);
  const YAML::Node config = YAML::LoadFile(work / "run/summary.json")["config"];
  CHECK(config["network"]["incast"].as<std::string>() == "false");
  CHECK(config["variability"]["gpu_spread"].as<double>() == 0);

  const testing::Outcome bad = dynamix("config --set network.min_rto_ms=0");
  CHECK(bad.status == 2);
  CHECK(bad.stderr_text ==
        "dynamix: --set network.min_rto_ms=0: network.min_rto_ms: expected a number in (0, "
        "1e+09], found '0'\n");
  const testing::Outcome unknown = dynamix("config --set network.nosuch.deep=1");
  CHECK(unknown.status == 2);
  CHECK(unknown.stderr_text.find("--set: network: expected an existing key") != std::string::npos);
}

}  // namespace
}  // namespace dynamix
