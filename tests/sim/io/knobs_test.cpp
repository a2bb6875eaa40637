// The knob engine over a struct of its own: ranges as errors say them, checked parsing of
// command-line text, defaults from the struct, and rows moved into a struct that holds theirs.
#include "sim/io/knobs.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <optional>

namespace dynamix {
namespace {

enum class Shape { kRing, kTree };

struct Part {
  double rate = 0.5;
  std::uint64_t seed = 1;
  int count = 3;
  bool fast = false;
  Shape shape = Shape::kRing;
  std::optional<double> budget = std::nullopt;
};

struct Whole {
  Part part;
};

using Rows = KnobRows<Part, ExactNumbers>;

template <typename Member>
auto field(Member member) {
  return [member](auto& part) -> auto& { return part.*member; };
}

KnobTable<Part> part_knobs() {
  return Rows::table(
      "", "a test component",
      {Rows::quantity({.key = "rate", .meaning = "a rate"}, field(&Part::rate),
                      Range{.low = 0, .low_open = true, .high = 1}),
       Rows::quantity({.key = "seed", .meaning = "a seed"}, field(&Part::seed), integers(0)),
       Rows::quantity({.key = "count", .meaning = "a count"}, field(&Part::count), integers(1, 10)),
       Rows::flag({.key = "fast", .meaning = "a flag"}, field(&Part::fast)),
       Rows::choice<Shape>({.key = "shape", .meaning = "a shape"}, field(&Part::shape),
                           {{"ring", Shape::kRing}, {"tree", Shape::kTree}}, "shape"),
       Rows::quantity({.key = "budget", .meaning = "a budget"}, field(&Part::budget),
                      Range{.low = 0, .low_open = true, .finite = true})});
}

TEST_CASE("A range says what it expects as the errors of every table say it") {
  CHECK(Range{.low = 0, .low_open = true, .high = 1}.expected() == "a number in (0, 1]");
  CHECK(Range{.low = 0, .high = 1, .high_open = true}.expected() == "a number in [0, 1)");
  CHECK(Range{.low = 0, .low_open = true}.expected() == "a number > 0");
  CHECK(Range{.low = 0, .finite = true}.expected() == "a finite number >= 0");
  CHECK(integers(0).expected() == "an integer >= 0");
  CHECK(integers(1, 1 << 20).expected() == "an integer in [1, 1048576]");
  CHECK(integers(1, 1e12).expected() == "an integer in [1, 1000000000000]");
  CHECK_FALSE(Range{.low = 0, .finite = true}.contains(std::numeric_limits<double>::infinity()));
  CHECK(Range{.low = 0}.contains(std::numeric_limits<double>::infinity()));
}

TEST_CASE("A table's defaults are its struct's, shown as written") {
  const KnobTable<Part> table = part_knobs();
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"rate", "0.5"},   {"seed", "1"},     {"count", "3"},
      {"fast", "false"}, {"shape", "ring"}, {"budget", "none"}};
  REQUIRE(table.knobs.size() == expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(table.knobs[i].key == expected[i].first);
    CHECK(table.knobs[i].default_value == expected[i].second);
  }
  CHECK(shown_values(table, Part{}) == expected);
}

TEST_CASE("Text is stored through a row only when it is well formed and in range") {
  const KnobTable<Part> table = part_knobs();
  Part part;
  const auto parse = [&](const std::string& key, const std::string& text) {
    return find_knob(table, key)->parse(text, part);
  };
  CHECK(parse("rate", "0.25").outcome == KnobParse::Outcome::kStored);
  CHECK(part.rate == 0.25);
  const KnobParse high = parse("rate", "2.0");
  CHECK(high.outcome == KnobParse::Outcome::kOutOfRange);
  CHECK(high.found == "2");
  CHECK(parse("rate", "nan").found == "nan");
  CHECK(parse("rate", "fast").outcome == KnobParse::Outcome::kMalformed);
  CHECK(part.rate == 0.25);
  CHECK(parse("seed", "-1").found == "-1");
  CHECK(parse("seed", "1.5").outcome == KnobParse::Outcome::kMalformed);
  CHECK(parse("seed", "9007199254740993").outcome == KnobParse::Outcome::kStored);
  CHECK(part.seed == 9007199254740993ull);
  CHECK(find_knob(table, "seed")->show(part) == "9007199254740993");
  CHECK(parse("count", "11").found == "11");
  CHECK(parse("fast", "true").outcome == KnobParse::Outcome::kStored);
  CHECK(part.fast);
  CHECK(parse("shape", "star").found == "'star'");
  CHECK(parse("shape", "tree").outcome == KnobParse::Outcome::kStored);
  CHECK(part.shape == Shape::kTree);
  CHECK(parse("budget", "inf").outcome == KnobParse::Outcome::kOutOfRange);
  CHECK(parse("budget", "7").outcome == KnobParse::Outcome::kStored);
  CHECK(part.budget == 7);
}

TEST_CASE("The first row out of range names its key, range and value") {
  const KnobTable<Part> table = part_knobs();
  CHECK_FALSE(first_violation(table, Part{}).has_value());
  const auto refused = first_violation(table, Part{.count = 0});
  REQUIRE(refused.has_value());
  CHECK(refused->key == "count");
  CHECK(refused->expected == "an integer in [1, 10]");
  CHECK(refused->found == "0");
}

TEST_CASE("A row moved into a struct that holds its target reads and shows the inner field") {
  const KnobTable<Part> table = part_knobs();
  const Knob<Whole> rate = rebased<Whole>(
      *find_knob(table, "rate"), [](auto& whole) -> auto& { return whole.part; });
  Whole whole;
  CHECK(rate.key == "rate");
  CHECK(rate.parse("0.75", whole).outcome == KnobParse::Outcome::kStored);
  CHECK(whole.part.rate == 0.75);
  CHECK(rate.show(whole) == "0.75");
  whole.part.rate = 3;
  CHECK(rate.violation(whole) == "3");
}

}  // namespace
}  // namespace dynamix
