// The corpus runner's mutations.
#include "tests/fuzz/mutator.h"

#include <array>
#include <cctype>
#include <string_view>
#include <utility>
#include <vector>

namespace dynamix::fuzz {
namespace {

/// Values that sit on the edges of the loaders' ranges and of int, int64 and double.
constexpr std::array<std::string_view, 34> kEdgeValues = {"0",
                                                          "-0",
                                                          "-1",
                                                          "1",
                                                          "2",
                                                          "0.5",
                                                          "1e300",
                                                          "-1e300",
                                                          "1e-300",
                                                          "1e-12",
                                                          "1e-9",
                                                          "1e-320",
                                                          "1e19",
                                                          "3000000000",
                                                          "2147483647",
                                                          "2147483648",
                                                          "-2147483649",
                                                          "4294967296",
                                                          "9223372036854775807",
                                                          "9223372036854775808",
                                                          "18446744073709551616",
                                                          "nan",
                                                          ".nan",
                                                          "NaN",
                                                          "inf",
                                                          ".inf",
                                                          "-.inf",
                                                          "",
                                                          "0x10",
                                                          "1_000",
                                                          "+5",
                                                          "~",
                                                          "null",
                                                          "\"\""};

/// YAML and CSV syntax that changes how the rest parses.
constexpr std::array<std::string_view, 20> kSpecials = {
    "&a ", "*a", "<<: *a\n", "!!str ", "!!binary ", "---\n", "...\n", "? ", "- ", "{}",
    "[]",  "{",  "[",        "\"",     "'",         ": ",    ",",     "#",  "\t", "\r\n"};

constexpr std::array<char, 14> kBytes = {'\0', '\n', ':', '-', ' ',  '{',    '[',
                                         '"',  '\'', '#', ',', '\t', '\xff', '.'};

bool is_number_char(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' || c == 'E' ||
         c == '+' || c == '-';
}

/// [begin, end) of every run of number characters that holds a digit.
std::vector<std::pair<std::size_t, std::size_t>> number_tokens(const std::string& text) {
  std::vector<std::pair<std::size_t, std::size_t>> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    if (!is_number_char(text[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    bool digit = false;
    while (end < text.size() && is_number_char(text[end])) {
      digit = digit || std::isdigit(static_cast<unsigned char>(text[end]));
      ++end;
    }
    if (digit) tokens.emplace_back(i, end);
    i = end;
  }
  return tokens;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t begin = 0;
  while (begin < text.size()) {
    const auto newline = text.find('\n', begin);
    const auto end = newline == std::string::npos ? text.size() : newline;
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + '\n';
  return text;
}

std::string_view pick_edge(MutationRng& rng) { return kEdgeValues[rng.below(kEdgeValues.size())]; }

void mutate_once(std::string& text, std::span<const std::string> others, MutationRng& rng) {
  const std::size_t position = rng.below(text.size() + 1);
  switch (rng.below(12)) {
    case 0:  // flip one bit
      if (!text.empty()) text[position % text.size()] ^= static_cast<char>(1u << rng.below(8));
      return;
    case 1:  // insert a byte
      text.insert(
          position, 1,
          rng.below(3) ? kBytes[rng.below(kBytes.size())] : static_cast<char>(rng.below(256)));
      return;
    case 2:  // delete up to 8 bytes
      text.erase(position, 1 + rng.below(8));
      return;
    case 3:
    case 4: {  // a number becomes an edge value
      const auto tokens = number_tokens(text);
      if (tokens.empty()) {
        text.insert(position, pick_edge(rng));
        return;
      }
      const auto [begin, end] = tokens[rng.below(tokens.size())];
      text.replace(begin, end - begin, pick_edge(rng));
      return;
    }
    case 5: {  // a value after ": " or "," becomes an edge value or nothing
      auto lines = lines_of(text);
      if (lines.empty()) return;
      std::string& line = lines[rng.below(lines.size())];
      auto separator = line.find(": ");
      std::size_t skip = 2;
      if (separator == std::string::npos) {
        separator = line.find(',');
        skip = 1;
      }
      if (separator == std::string::npos) return;
      const auto value_end = line.find_first_of(",}#", separator + skip);
      line.replace(separator + skip,
                   (value_end == std::string::npos ? line.size() : value_end) - separator - skip,
                   rng.below(3) ? pick_edge(rng) : "");
      text = join_lines(lines);
      return;
    }
    case 6: {  // duplicate a line: duplicate keys, repeated rows
      auto lines = lines_of(text);
      if (lines.empty()) return;
      const std::size_t i = rng.below(lines.size());
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(i), lines[i]);
      text = join_lines(lines);
      return;
    }
    case 7: {  // delete or swap lines
      auto lines = lines_of(text);
      if (lines.size() < 2) return;
      const std::size_t i = rng.below(lines.size());
      if (rng.below(2)) {
        lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        std::swap(lines[i], lines[rng.below(lines.size())]);
      }
      text = join_lines(lines);
      return;
    }
    case 8: {  // a very long string
      constexpr std::array<std::size_t, 3> kLengths = {300, 5000, 70000};
      const char fill = rng.below(2) ? 'x' : '9';
      text.insert(position, std::string(kLengths[rng.below(kLengths.size())], fill));
      return;
    }
    case 9:
    case 10: {  // splice a line of another seed in
      if (others.empty()) return;
      const auto lines = lines_of(others[rng.below(others.size())]);
      if (lines.empty()) return;
      auto target = lines_of(text);
      target.insert(target.begin() + static_cast<std::ptrdiff_t>(rng.below(target.size() + 1)),
                    lines[rng.below(lines.size())]);
      text = join_lines(target);
      return;
    }
    default:  // YAML or CSV syntax
      text.insert(position, kSpecials[rng.below(kSpecials.size())]);
      return;
  }
}

}  // namespace

std::uint64_t MutationRng::next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string mutate(const std::string& seed_text, std::span<const std::string> others,
                   MutationRng& rng) {
  std::string text = seed_text;
  const std::size_t count = 1 + rng.below(3);
  for (std::size_t i = 0; i < count; ++i) mutate_once(text, others, rng);
  return text;
}

}  // namespace dynamix::fuzz
