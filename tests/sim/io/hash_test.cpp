// fnv1a: the published FNV-1a values, which resumed runs and MPI ranks compare across builds.
#include "sim/io/hash.h"

#include <doctest/doctest.h>

namespace dynamix {
namespace {

TEST_CASE("fnv1a gives the published 64-bit FNV-1a values") {
  CHECK(fnv1a("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a("foobar") == 0x85944171f73967e8ull);
  static_assert(fnv1a("a") != fnv1a("b"));
}

TEST_CASE("fnv1a reads bytes above 127 as unsigned") {
  // A signed char would sign-extend into the upper bits before the XOR.
  CHECK(fnv1a("\xff") == ((0xcbf29ce484222325ull ^ 0xffull) * 1099511628211ull));
}

}  // namespace
}  // namespace dynamix
