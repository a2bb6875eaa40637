// Options declared once: one row per key (type, unit, range, default, meaning, source) with the
// typed readers that parse, check, show and write its value in the struct it configures. The rows
// drive parsing, range checks, error messages, --help, settings, run records (run.json) and the
// configuration reference.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/core/time.h"
#include "sim/io/config_node.h"
#include "sim/io/json_writer.h"

namespace dynamix {

/// The bounds a value must lie within; an open end excludes the bound.
struct Range {
  /// The bound of an open end.
  static constexpr double kUnbounded = std::numeric_limits<double>::infinity();

  double low = -kUnbounded;
  bool low_open = false;
  double high = kUnbounded;
  bool high_open = false;
  bool integer = false;
  /// Infinities and NaN lie outside, and an unbounded range says "a finite number".
  bool finite = false;

  bool contains(double value) const;
  /// As errors say it: "a number in (0, 1]", "an integer >= 0", "a finite number > 0".
  std::string expected() const;
};

/// Integers from `low` to `high`.
Range integers(double low, double high = Range::kUnbounded);

/// The value of `key` in `section` (an integer when range.integer) checked against `range`, a
/// value outside failing in the range's own words, then `note`; `fallback` when absent. For the
/// hand-written readers, so that their messages say what the reference's rows say.
double read_in(const ConfigNode& section, std::string_view key, const Range& range, double fallback,
               std::string_view note = {});

/// Where a key's values usually lie: a value outside, though inside the hard range, is more likely
/// a unit slip (Mb/s for Gb/s, a percent for a fraction) than meant, and draws a warning.
struct Typical {
  double low = -Range::kUnbounded;
  double high = Range::kUnbounded;
  /// What lies beyond each bound, as the warning says it ("above any NIC we know").
  std::string above = {};
  std::string below = {};
  /// Said beside the bound, after the unit ("a fraction: 0.01 is 1%").
  std::string hint = {};
  /// Factors a slip multiplies a value by; the first whose quotient lies inside is suggested.
  std::vector<double> slips = {};

  bool contains(double value) const { return value >= low && value <= high; }
};

/// The warning for `value` of `key` outside `typical` (nullopt inside): "KEY VALUE is above any NIC
/// we know (≤ 1600 Gb/s); did you mean 25?".
std::optional<std::string> implausibility(const std::string& key, double value,
                                          const std::string& unit, const Typical& typical);

/// What a row made of a value given as text (a command-line option).
struct KnobParse {
  enum class Outcome { kStored, kMalformed, kOutOfRange };
  Outcome outcome = Outcome::kStored;
  /// The value as found, when out of range.
  std::string found = {};
};

/// One key of a component's options, over the struct `Target` it configures.
template <typename Target>
struct Knob {
  /// The key as a file or --set gives it ("network.mss_bytes"), or the option's name ("gamma").
  std::string key;
  /// "number", "integer", "true or false", "one of ring, ps", "text", "list", ...
  std::string type;
  /// The unit the value is given in ("KiB", "ms"); empty for plain quantities.
  std::string unit;
  /// What a value must satisfy, as errors say it ("a number > 0").
  std::string range;
  /// The value when the key is absent, as written ("required" where there is none).
  std::string default_value;
  /// One line: what the key controls.
  std::string meaning;
  /// Where the default comes from (a paper, a standard, "assumed").
  std::string source;
  /// Reads the key from its section's map, checked, into the target; absent keys leave it as it
  /// is. Empty for keys read elsewhere.
  std::function<void(const ConfigNode& section, Target& target)> read = {};
  /// Stores a value given as text, checked against the range; a list row appends one element.
  std::function<KnobParse(const std::string& text, Target& target)> parse = {};
  /// The target's value as found when it lies outside the range (targets built in code); empty
  /// for keys whose every value is valid.
  std::function<std::optional<std::string>(const Target& target)> violation = {};
  /// The target's value as a file or the command line would give it.
  std::function<std::string(const Target& target)> show = {};
  /// The target's value as one JSON value: numbers and integers as numbers (null when absent),
  /// flags as booleans, lists as arrays, the rest as strings. Empty: written as show's text.
  std::function<void(JsonWriter& json, const Target& target)> write = {};
  /// Where values usually lie; none for keys whose every valid value is plausible.
  std::optional<Typical> typical = {};
  /// Whether a run's record (run.json) holds the value, and a resume must repeat it: false for
  /// options that say how a command runs (--out, --resume, --quiet, --strict, --jobs, --threads),
  /// not what it computes, so that the same run records the same bytes.
  bool recorded = true;
};

/// The keys of one section of a file, or of one component's options.
template <typename Target>
struct KnobTable {
  /// "" for the top level or for a component's options.
  std::string section;
  /// One line: what the section configures.
  std::string meaning;
  std::vector<Knob<Target>> knobs;
  /// Sets what depends on other keys of the section when they are absent; may be empty.
  std::function<void(const ConfigNode* section, Target& target)> complete = {};
};

/// The row of `key`, or nullptr.
template <typename Target>
const Knob<Target>* find_knob(const KnobTable<Target>& table, const std::string& key) {
  for (const Knob<Target>& knob : table.knobs) {
    if (knob.key == key) return &knob;
  }
  return nullptr;
}

/// Each row's value in `target`, key and text, in the table's order.
template <typename Target>
std::vector<std::pair<std::string, std::string>> shown_values(const KnobTable<Target>& table,
                                                              const Target& target) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const Knob<Target>& knob : table.knobs) values.emplace_back(knob.key, knob.show(target));
  return values;
}

/// A key as Python's keyword arguments and the JSON records name it: '-' as '_'
/// ("decision-interval" -> "decision_interval").
std::string snake_case(std::string key);

/// Each recorded row's value in `target` as a member of the JSON object being written, keyed as
/// Python names it (snake_case), in the table's order: run.json records a run's options from the
/// tables that declare them.
template <typename Target>
void write_knob_values(JsonWriter& json, const KnobTable<Target>& table, const Target& target) {
  for (const Knob<Target>& knob : table.knobs) {
    if (!knob.recorded) continue;
    json.key(snake_case(knob.key));
    if (knob.write) {
      knob.write(json, target);
    } else {
      json.value(knob.show(target));
    }
  }
}

/// `knob` over a struct that holds its target: `part(outer)` is the inner struct (a generic
/// lambda, called on const and non-const structs).
template <typename Outer, typename Inner, typename Part>
Knob<Outer> rebased(const Knob<Inner>& knob, Part part) {
  Knob<Outer> outer{knob.key,           knob.type,    knob.unit,  knob.range,
                    knob.default_value, knob.meaning, knob.source};
  outer.typical = knob.typical;
  outer.recorded = knob.recorded;
  if (knob.read) {
    outer.read = [read = knob.read, part](const ConfigNode& section, Outer& target) {
      read(section, part(target));
    };
  }
  if (knob.parse) {
    outer.parse = [parse = knob.parse, part](const std::string& text, Outer& target) {
      return parse(text, part(target));
    };
  }
  if (knob.violation) {
    outer.violation = [violation = knob.violation, part](const Outer& target) {
      return violation(part(target));
    };
  }
  if (knob.show) {
    outer.show = [show = knob.show, part](const Outer& target) { return show(part(target)); };
  }
  if (knob.write) {
    outer.write = [write = knob.write, part](JsonWriter& json, const Outer& target) {
      write(json, part(target));
    };
  }
  return outer;
}

/// Numbers as a scenario file shows them: 12 significant digits.
struct ShortNumbers {
  static std::string number(double value) { return format_number(value); }
  static std::string integer(long long value) { return format_number(static_cast<double>(value)); }
};

/// The shortest text that reads back as `value`, in fixed notation where that fits.
std::string exact_number(double value);

/// Numbers in the shortest text that reads back as the same value (settings a resume compares).
struct ExactNumbers {
  static std::string number(double value) { return exact_number(value); }
  static std::string integer(long long value) { return std::to_string(value); }
};

/// `text` as a whole number or integer; nullopt when it is not one.
std::optional<double> parse_number(const std::string& text);
std::optional<long long> parse_integer(const std::string& text);

/// What every row says about itself.
struct KnobText {
  std::string key;
  std::string unit = {};
  std::string meaning;
  std::string source = {};
  /// Replaces the default shown from the target's defaults when it depends on other keys.
  std::string default_value = {};
  /// Knob::recorded.
  bool recorded = true;
};

namespace knob_detail {

template <typename T>
std::optional<long long> as_integer(const T& value) {
  if constexpr (requires { value.has_value(); }) {
    if (!value) return std::nullopt;
    return static_cast<long long>(*value);
  } else {
    return static_cast<long long>(value);
  }
}

template <typename T>
std::optional<double> as_double(const T& value) {
  if constexpr (requires { value.has_value(); }) {
    if (!value) return std::nullopt;
    return static_cast<double>(*value);
  } else {
    return static_cast<double>(value);
  }
}

/// Whether an integer field (plain or optional) can hold `value`.
template <typename Field>
bool fits(const Field&, long long value) {
  if constexpr (requires { typename Field::value_type; }) {
    using Value = typename Field::value_type;
    if constexpr (std::is_integral_v<Value>) return std::in_range<Value>(value);
    return true;
  } else if constexpr (std::is_integral_v<Field>) {
    return std::in_range<Field>(value);
  } else {
    return true;
  }
}

/// A plain or optional number field, given as value / scale, as a JSON number; null when absent.
template <typename Field>
void write_quantity(JsonWriter& json, const Field& field, bool integer, double scale) {
  const std::optional<long long> whole = integer ? as_integer(field) : std::nullopt;
  const std::optional<double> value = as_double(field);
  if (!value) {
    json.null();
  } else if (whole) {
    json.value(static_cast<std::int64_t>(*whole));
  } else {
    json.value(*value / scale);
  }
}

/// Stores a value into a plain or optional field of its type.
template <typename Field, typename Value>
void store(Field& field, Value value) {
  if constexpr (requires { typename Field::value_type; }) {
    field = static_cast<typename Field::value_type>(value);
  } else {
    field = static_cast<Field>(value);
  }
}

}  // namespace knob_detail

/// The typed row builders over `Target`. `Access` maps a target to the field; `Numbers` says how
/// values are shown (ShortNumbers or ExactNumbers).
template <typename Target, typename Numbers = ShortNumbers>
struct KnobRows {
  using Row = Knob<Target>;

  static Row described(KnobText text, std::string type, std::string range) {
    return Row{.key = std::move(text.key),
               .type = std::move(type),
               .unit = std::move(text.unit),
               .range = std::move(range),
               .default_value = std::move(text.default_value),
               .meaning = std::move(text.meaning),
               .source = std::move(text.source),
               .recorded = text.recorded};
  }

  static std::string shown(double value, const Range& range) {
    return range.integer ? Numbers::integer(std::llround(value)) : Numbers::number(value);
  }

  /// A number or integer field, given as value / scale (a KiB key of a bytes field has scale
  /// 1024).
  template <typename Access>
  static Row quantity(KnobText text, Access access, Range range, double scale = 1) {
    Row knob = described(std::move(text), range.integer ? "integer" : "number", range.expected());
    knob.read = [name = knob.key, access, range, scale](const ConfigNode& section, Target& target) {
      const auto child = section.find(name);
      if (!child) return;
      if (range.integer) {
        const std::int64_t value = child->as_integer();
        if (!range.contains(static_cast<double>(value))) child->fail(range.expected());
        knob_detail::store(access(target), value);
      } else {
        const double value = child->as_number();
        if (!range.contains(value)) child->fail(range.expected());
        knob_detail::store(access(target), value * scale);
      }
    };
    knob.parse = [access, range, scale](const std::string& text, Target& target) -> KnobParse {
      if (range.integer) {
        const std::optional<long long> value = parse_integer(text);
        if (!value) return {KnobParse::Outcome::kMalformed};
        if (!range.contains(static_cast<double>(*value))) {
          return {KnobParse::Outcome::kOutOfRange, Numbers::integer(*value)};
        }
        // A value its field cannot hold is malformed, as a parser into the field would find it.
        if (!knob_detail::fits(access(target), *value)) return {KnobParse::Outcome::kMalformed};
        knob_detail::store(access(target), *value);
        return {};
      }
      const std::optional<double> value = parse_number(text);
      if (!value) return {KnobParse::Outcome::kMalformed};
      if (!range.contains(*value))
        return {KnobParse::Outcome::kOutOfRange, Numbers::number(*value)};
      knob_detail::store(access(target), *value * scale);
      return {};
    };
    knob.violation = [access, range, scale](const Target& target) -> std::optional<std::string> {
      const std::optional<double> value = knob_detail::as_double(access(target));
      if (value && !range.contains(*value / scale)) return shown(*value / scale, range);
      return std::nullopt;
    };
    knob.show = [access, range, scale](const Target& target) {
      if (range.integer) {
        const std::optional<long long> value = knob_detail::as_integer(access(target));
        return value ? Numbers::integer(*value) : std::string("none");
      }
      const std::optional<double> value = knob_detail::as_double(access(target));
      return value ? Numbers::number(*value / scale) : std::string("none");
    };
    knob.write = [access, range, scale](JsonWriter& json, const Target& target) {
      knob_detail::write_quantity(json, access(target), range.integer, scale);
    };
    return knob;
  }

  /// A Duration field given in units of `unit_seconds`, from 0 (or above 0) to kMaxInputSeconds
  /// so that simulated time stays far inside int64 nanoseconds.
  template <typename Access>
  static Row duration(KnobText text, Access access, double unit_seconds, bool allow_zero) {
    const Range range{.low = 0, .low_open = !allow_zero, .high = kMaxInputSeconds / unit_seconds};
    Row knob = described(std::move(text), "number", range.expected());
    // Checked in nanoseconds: a value at the bound survives the round trip through Duration.
    const auto in_range = [allow_zero](Duration value) {
      return value >= Duration::zero() && value <= from_seconds(kMaxInputSeconds) &&
             (allow_zero || value > Duration::zero());
    };
    knob.read = [name = knob.key, access, range, unit_seconds, in_range](const ConfigNode& section,
                                                                         Target& target) {
      const auto child = section.find(name);
      if (!child) return;
      const double value = child->as_number();
      if (!range.contains(value)) child->fail(range.expected());
      const Duration stored = from_seconds(value * unit_seconds);
      if (!in_range(stored)) child->fail(range.expected());
      access(target) = stored;
    };
    knob.violation = [access, unit_seconds,
                      in_range](const Target& target) -> std::optional<std::string> {
      if (in_range(access(target))) return std::nullopt;
      return Numbers::number(to_seconds(access(target)) / unit_seconds);
    };
    knob.show = [access, unit_seconds](const Target& target) {
      return Numbers::number(to_seconds(access(target)) / unit_seconds);
    };
    knob.write = [access, unit_seconds](JsonWriter& json, const Target& target) {
      json.value(to_seconds(access(target)) / unit_seconds);
    };
    return knob;
  }

  template <typename Access>
  static Row flag(KnobText text, Access access) {
    Row knob = described(std::move(text), "true or false", "true or false");
    knob.read = [name = knob.key, access](const ConfigNode& section, Target& target) {
      if (const auto child = section.find(name)) access(target) = child->as_bool();
    };
    knob.parse = [access](const std::string& text, Target& target) -> KnobParse {
      if (text != "true" && text != "false") return {KnobParse::Outcome::kMalformed};
      access(target) = text == "true";
      return {};
    };
    knob.show = [access](const Target& target) {
      return std::string(access(target) ? "true" : "false");
    };
    knob.write = [access](JsonWriter& json, const Target& target) {
      json.value(static_cast<bool>(access(target)));
    };
    return knob;
  }

  /// One of a few words, each naming a value of an enum; `noun` names it in errors ("unknown
  /// optimizer 'lamb'").
  template <typename Enum, typename Access>
  static Row choice(KnobText text, Access access, std::vector<std::pair<std::string, Enum>> words,
                    const std::string& noun) {
    std::string list;
    for (const auto& entry : words) list += (list.empty() ? "" : ", ") + entry.first;
    Row knob = described(std::move(text), "one of " + list, "one of " + list);
    knob.read = [name = knob.key, access, words, noun, expected = knob.range](
                    const ConfigNode& section, Target& target) {
      const auto child = section.find(name);
      if (!child) return;
      const std::string word = child->as_text();
      for (const auto& [candidate, value] : words) {
        if (candidate == word) {
          access(target) = value;
          return;
        }
      }
      child->fail(expected, "unknown " + noun + " '" + word + "'");
    };
    knob.parse = [access, words](const std::string& word, Target& target) -> KnobParse {
      for (const auto& [candidate, value] : words) {
        if (candidate != word) continue;
        access(target) = value;
        return {};
      }
      return {KnobParse::Outcome::kOutOfRange, "'" + word + "'"};
    };
    knob.show = [access, words](const Target& target) {
      for (const auto& [word, value] : words) {
        if (value == access(target)) return word;
      }
      return std::string("?");
    };
    return knob;
  }

  template <typename Access>
  static Row text(KnobText description, Access access) {
    Row knob = described(std::move(description), "text", "text");
    knob.read = [name = knob.key, access](const ConfigNode& section, Target& target) {
      if (const auto child = section.find(name)) access(target) = child->as_text();
    };
    knob.parse = [access](const std::string& text, Target& target) -> KnobParse {
      access(target) = text;
      return {};
    };
    knob.show = [access](const Target& target) { return access(target); };
    return knob;
  }

  /// Texts given one at a time (a repeatable option); shown joined by spaces.
  template <typename Access>
  static Row texts(KnobText description, Access access) {
    Row knob = described(std::move(description), "list", "text, repeatable");
    knob.parse = [access](const std::string& text, Target& target) -> KnobParse {
      access(target).push_back(text);
      return {};
    };
    knob.show = [access](const Target& target) {
      std::string joined;
      for (const std::string& text : access(target)) {
        if (!joined.empty()) joined += ' ';
        joined += text;
      }
      return joined;
    };
    knob.write = [access](JsonWriter& json, const Target& target) {
      json.begin_array();
      for (const std::string& text : access(target)) json.value(text);
      json.end_array();
    };
    return knob;
  }

  /// Integers each in `range`, at most `max_count` of them; shown joined by spaces.
  template <typename Access>
  static Row integer_list(KnobText description, Access access, Range range, std::size_t max_count) {
    Row knob = described(std::move(description), "list", range.expected());
    knob.violation = [access, range,
                      max_count](const Target& target) -> std::optional<std::string> {
      const auto& values = access(target);
      if (values.size() > max_count) {
        std::string found = std::to_string(values.size());
        found += " values (at most ";
        found += std::to_string(max_count);
        return found + ")";
      }
      for (const auto value : values) {
        if (!range.contains(static_cast<double>(value))) return std::to_string(value);
      }
      return std::nullopt;
    };
    knob.parse = [access, range](const std::string& text, Target& target) -> KnobParse {
      const std::optional<long long> value = parse_integer(text);
      if (!value) return {KnobParse::Outcome::kMalformed};
      if (!range.contains(static_cast<double>(*value))) {
        return {KnobParse::Outcome::kOutOfRange, std::to_string(*value)};
      }
      auto& values = access(target);
      values.push_back(static_cast<typename std::decay_t<decltype(values)>::value_type>(*value));
      return {};
    };
    knob.show = [access](const Target& target) {
      std::string joined;
      for (const auto value : access(target)) {
        if (!joined.empty()) joined += ' ';
        joined += std::to_string(value);
      }
      return joined;
    };
    knob.write = [access](JsonWriter& json, const Target& target) {
      json.begin_array();
      for (const auto value : access(target)) json.value(static_cast<std::int64_t>(value));
      json.end_array();
    };
    return knob;
  }

  /// Prefixes each row's key with the section (the rows read their short key from the section)
  /// and fills the defaults the rows do not give from `defaults`.
  static KnobTable<Target> table(std::string section, std::string meaning, std::vector<Row> knobs,
                                 const Target& defaults = Target{}) {
    for (Row& knob : knobs) {
      if (!section.empty()) knob.key = section + "." + knob.key;
      if (knob.default_value.empty() && knob.show) knob.default_value = knob.show(defaults);
    }
    return {std::move(section), std::move(meaning), std::move(knobs), {}};
  }
};

/// A row whose value lies outside its range.
struct KnobViolation {
  std::string key;
  std::string expected;
  std::string found;
};

/// The first row, in the table's order, whose value in `target` lies outside its range.
template <typename Target>
std::optional<KnobViolation> first_violation(const KnobTable<Target>& table, const Target& target) {
  for (const Knob<Target>& knob : table.knobs) {
    if (!knob.violation) continue;
    if (const auto found = knob.violation(target))
      return KnobViolation{knob.key, knob.range, *found};
  }
  return std::nullopt;
}

}  // namespace dynamix
