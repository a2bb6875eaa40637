// Plausibility warnings: the text of each, the suggested value, and one print per distinct warning
// and run.
#include "sim/io/diagnostics.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sim/io/config_node.h"
#include "sim/io/input_error.h"
#include "sim/io/knobs.h"

namespace dynamix {
namespace {

const Typical kLoss{.high = 0.01,
                    .above = "above any loss a training fabric runs with",
                    .hint = "a fraction: 0.01 is 1%",
                    .slips = {100}};

TEST_CASE("A loss_rate of 0.1 suggests the 0.1 percent it probably meant") {
  CHECK(implausibility("loss_rate", 0.1, "", kLoss) ==
        "loss_rate 0.1 is above any loss a training fabric runs with (\u2264 0.01, a fraction: "
        "0.01 is 1%); did you mean 0.001?");
  CHECK_FALSE(implausibility("loss_rate", 1e-4, "", kLoss));
  CHECK_FALSE(implausibility("loss_rate", 0.01, "", kLoss));
}

TEST_CASE("The first slip that lands inside the typical range is the suggestion") {
  const Typical flops{
      .high = 5000, .above = "above any accelerator we know", .slips = {1e3, 1e6, 1e9, 1e12}};
  CHECK(implausibility("peak_tflops", 121e12, "TFLOPS", flops) ==
        "peak_tflops 1.21e+14 is above any accelerator we know (\u2264 5000 TFLOPS); did "
        "you mean 121?");
  const Typical nvlink{
      .high = 14400, .above = "above any NVLink we know", .slips = {1e3, 1e6, 1e9}};
  CHECK(implausibility("sync.intra_node_gbps", 200e9, "Gb/s", nvlink)
            ->ends_with("did you mean 200?"));
  // No slip explains 1e30: the warning stands without a suggestion.
  CHECK(implausibility("sync.intra_node_gbps", 1e30, "Gb/s", nvlink)->ends_with("Gb/s)"));
}

TEST_CASE("A value below the typical range says what lies below") {
  const Typical typical{.low = 1, .high = 10, .below = "below any link we know"};
  CHECK(implausibility("k", 0.5, "Gb/s", typical) ==
        "k 0.5 is below any link we know (\u2265 1 Gb/s)");
}

TEST_CASE("A run's diagnostics print a distinct warning once, and a strict run refuses it") {
  const ConfigNode root = ConfigNode::parse("loss_rate: 0.2\n", "w.yaml");
  std::ostringstream printed;
  Diagnostics diagnostics({.out = &printed});
  diagnostics.check_typical(root, "loss_rate", "", kLoss);
  diagnostics.check_typical(root, "loss_rate", "", kLoss);
  diagnostics.check_typical(root, "absent", "", kLoss);
  REQUIRE(diagnostics.warnings().size() == 1);
  CHECK(diagnostics.warnings().front().starts_with("w.yaml:1: loss_rate 0.2 is above"));
  CHECK(printed.str() == "dynamix: warning: " + diagnostics.warnings().front() + "\n");

  Diagnostics strict({.strict = true, .out = &printed});
  CHECK_THROWS_WITH_AS(strict.check_typical(root, "loss_rate", "", kLoss),
                       doctest::Contains("expected a typical value (--strict), found 0.2 is above"),
                       InputError);
  CHECK(strict.warnings().empty());
}

TEST_CASE("Two runs in one process each warn about the same value") {
  const ConfigNode root = ConfigNode::parse("loss_rate: 0.2\n", "w.yaml");
  Diagnostics first;
  Diagnostics second;
  first.check_typical(root, "loss_rate", "", kLoss);
  second.check_typical(root, "loss_rate", "", kLoss);
  CHECK(first.warnings().size() == 1);
  CHECK(second.warnings() == first.warnings());
}

TEST_CASE("A run's threads checking the same value warn once between them") {
  const ConfigNode root = ConfigNode::parse("loss_rate: 0.2\nother: 0.3\n", "w.yaml");
  std::ostringstream printed;
  Diagnostics diagnostics({.out = &printed});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) {
        diagnostics.check_typical(root, "loss_rate", "", kLoss);
        diagnostics.check_typical(root, "other", "", kLoss);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(diagnostics.warnings().size() == 2);
  CHECK(printed.str().find("loss_rate 0.2") == printed.str().rfind("loss_rate 0.2"));
}

}  // namespace
}  // namespace dynamix
