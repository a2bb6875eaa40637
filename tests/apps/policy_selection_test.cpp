// The selection's verdict against the fixed point: worse by score, or a miss where the fixed
// point reached, is harm; a tie is not.
#include "apps/policy_selection.h"

#include <doctest/doctest.h>

namespace dynamix {

TEST_CASE("misses_beside counts the episodes a policy missed that the reference reached") {
  const SelectionScore fixed_point{.score = 1.0, .reached = {true, true, false, true}};
  const SelectionScore faster{.score = 0.9, .reached = {true, false, false, false}};
  CHECK(misses_beside(faster, fixed_point) == 2);
  CHECK(misses_beside(fixed_point, faster) == 0);
  CHECK(misses_beside(fixed_point, fixed_point) == 0);
  const SelectionScore reached_all{.score = 1.1, .reached = {true, true, true, true}};
  CHECK(misses_beside(reached_all, fixed_point) == 0);
  CHECK(misses_beside(fixed_point, reached_all) == 1);
}

TEST_CASE("A snapshot that scores worse or misses where the fixed point reached does harm") {
  const SelectionScore fixed_point{.score = 1.0, .reached = {true, false, true}};
  CHECK_FALSE(does_harm({.score = 0.95, .reached = {true, false, true}}, fixed_point));
  CHECK_FALSE(does_harm({.score = 1.0, .reached = {true, false, true}}, fixed_point));
  CHECK_FALSE(does_harm({.score = 0.95, .reached = {true, true, true}}, fixed_point));
  CHECK(does_harm({.score = 1.001, .reached = {true, false, true}}, fixed_point));
  // Faster where it reached, but it missed an episode the fixed point reached.
  CHECK(does_harm({.score = 0.8, .reached = {true, false, false}}, fixed_point));
}

}  // namespace dynamix
