// The PPO options' table: checkpoint settings and range checks come from its rows.
#include "policies/ppo/ppo_options.h"

#include <doctest/doctest.h>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

std::string refusal(const PpoOptions& options) {
  try {
    validate(options);
  } catch (const InputError& error) {
    return error.what();
  }
  return "";
}

TEST_CASE("settings() holds every row of the PPO table, in its order, values as rows show them") {
  const PpoOptions options{.seed = 7, .learning_rate = 1e-3, .hidden_sizes = {32, 16}};
  const RunSettings values = settings(options);
  const KnobTable<PpoOptions>& table = ppo_knobs();
  REQUIRE(values.size() == table.knobs.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    CAPTURE(values[i].first);
    CHECK(values[i].first == table.knobs[i].key);
    CHECK(values[i].second == table.knobs[i].show(options));
  }
  CHECK(values.front() == std::pair<std::string, std::string>{"seed", "7"});
  CHECK(values[5] == std::pair<std::string, std::string>{"learning-rate", "0.001"});
  CHECK(values[21] == std::pair<std::string, std::string>{"hidden-sizes", "32 16"});
}

TEST_CASE("The PPO table's defaults are PpoOptions{}'s, one row per field") {
  const KnobTable<PpoOptions>& table = ppo_knobs();
  CHECK(table.knobs.size() == 23);
  for (const auto& [key, text] : settings(PpoOptions{})) {
    CAPTURE(key);
    REQUIRE(find_knob(table, key) != nullptr);
    CHECK(find_knob(table, key)->default_value == text);
  }
  CHECK(find_knob(table, "learning-rate")->default_value == "0.001");
  CHECK(find_knob(table, "gamma")->default_value == "0.999");
}

TEST_CASE("validate() refuses the first option outside its row's range, naming --option") {
  CHECK(refusal(PpoOptions{}).empty());
  CHECK(refusal({.gamma = 2}) == "--gamma: expected a number in (0, 1], found 2");
  CHECK(refusal({.learning_rate = -1}) ==
        "--learning-rate: expected a finite number > 0, found -1");
  CHECK(refusal({.rollout_steps = 0}) ==
        "--rollout-steps: expected an integer in [1, 1048576], found 0");
  CHECK(refusal({.hidden_sizes = {64, 0}}) ==
        "--hidden-sizes: expected an integer in [1, 16384], found 0");
}

}  // namespace
}  // namespace dynamix
