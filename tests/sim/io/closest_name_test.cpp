// "Did you mean": suggestions within two edits or by prefix, and none for a far name.
#include "sim/io/closest_name.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace dynamix {
namespace {

const std::vector<std::string> kKeys = {"bandwidth_gbps", "latency_us", "loss_rate", "to"};

TEST_CASE("closest_name suggests a key within two edits of a misspelling") {
  CHECK(closest_name("bandwith_gbps", kKeys) == "bandwidth_gbps");
  CHECK(closest_name("los_rate", kKeys) == "loss_rate");
  CHECK(closest_name("latancy_us", kKeys) == "latency_us");
  CHECK(closest_name("snyc", {"training", "sync"}) == "sync");
}

TEST_CASE("closest_name suggests a name the misspelling is a prefix of, or that is its prefix") {
  CHECK(closest_name("bandwidth", kKeys) == "bandwidth_gbps");
  CHECK(closest_name("latency", kKeys) == "latency_us");
  CHECK(closest_name("loss_rate_percent", kKeys) == "loss_rate");
}

TEST_CASE("closest_name ignores case, so a lower-case GPU name finds its catalog entry") {
  CHECK(closest_name("a100", {"A100", "H100", "V100"}) == "A100");
  CHECK(closest_name("v10", {"A100", "H100", "V100"}) == "V100");
}

TEST_CASE("closest_name suggests nothing for a name far from every candidate") {
  CHECK_FALSE(closest_name("gpu", kKeys).has_value());
  CHECK_FALSE(closest_name("x", kKeys).has_value());
  CHECK_FALSE(closest_name("anything", {}).has_value());
  CHECK(did_you_mean("gpu", kKeys).empty());
  // Two edits apart, but half of each name: a guess, not a suggestion.
  CHECK_FALSE(closest_name("B200", {"A100", "H100", "V100"}).has_value());
}

TEST_CASE("closest_name compares a long refused name only by its prefix") {
  // A fuzzed --set key of thousands of characters costs what a short one does.
  const std::string long_name = "loss_rate" + std::string(100000, 'x');
  CHECK(closest_name(long_name, kKeys) == "loss_rate");
  CHECK_FALSE(closest_name(std::string(100000, 'x'), kKeys).has_value());
}

TEST_CASE("did_you_mean writes the suggestion to append to a message") {
  CHECK(did_you_mean("bandwith_gbps", kKeys) == "; did you mean 'bandwidth_gbps'?");
}

}  // namespace
}  // namespace dynamix
