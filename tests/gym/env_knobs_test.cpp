// The environment's options table: one default, EnvOptions{}'s, and range checks from its rows.
#include "gym/env_knobs.h"

#include <doctest/doctest.h>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

TEST_CASE(
    "The environment's table shows EnvOptions{}'s defaults, train's goodput base and k = 20") {
  const KnobTable<EnvOptions>& table = env_knobs();
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"decision-interval", "20"}, {"decision-lag", "0"},      {"max-batch-change", "0"},
      {"max-lr-change", "0"},      {"action-base", "goodput"}, {"actions", "the action base's"},
      {"min-batch", "32"},         {"max-batch", "1024"},      {"initial-batch", "0"},
      {"stop-at-target", "true"}};
  REQUIRE(table.knobs.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(table.knobs[i].key == expected[i].first);
    CHECK(table.knobs[i].default_value == expected[i].second);
    if (expected[i].first != "actions") {
      CHECK(table.knobs[i].show(EnvOptions{}) == expected[i].second);
    }
  }
}

TEST_CASE("validate() names the first environment option outside its range") {
  CHECK_NOTHROW(validate(EnvOptions{}));
  try {
    validate({.decision_interval = 0});
    FAIL("accepted k = 0");
  } catch (const InputError& error) {
    CHECK(std::string(error.what()) ==
          "--decision-interval: expected an integer in [1, 1048576], found 0");
  }
  CHECK_THROWS_AS(validate({.max_batch_change = 0.5}), InputError);
}

TEST_CASE("The evaluation commands' environment decides every 10 iterations on the balanced base") {
  const EnvOptions options = evaluation_env_options();
  CHECK(options.decision_interval == 10);
  CHECK(options.action_base == ActionBase::kBalanced);
  CHECK(options.min_batch == EnvOptions{}.min_batch);
}

}  // namespace
}  // namespace dynamix
