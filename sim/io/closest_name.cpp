// Closest names by Levenshtein distance, for suggestions in error messages.
#include "sim/io/closest_name.h"

#include <algorithm>
#include <cctype>
#include <vector>

namespace dynamix {
namespace {

constexpr std::size_t kMaxEdits = 2;
/// A prefix shorter than this matches too much to suggest anything ("a" of every key).
constexpr std::size_t kMinPrefix = 3;

char folded(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

/// Optimal string alignment distance: Levenshtein with a swap of neighbours as one edit
/// ("snyc" is one edit from "sync").
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = folded(a[i - 1]) == folded(b[j - 1]);
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && folded(a[i - 1]) == folded(b[j - 2]) &&
          folded(a[i - 2]) == folded(b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

/// Two edits turn any short name into any other ("B200" into "A100"): a third of the longer
/// name's length, at least one and at most kMaxEdits.
std::size_t allowed_edits(std::string_view a, std::string_view b) {
  return std::clamp<std::size_t>(std::max(a.size(), b.size()) / 3, 1, kMaxEdits);
}

bool is_prefix(std::string_view shorter, std::string_view longer) {
  if (shorter.size() < kMinPrefix || shorter.size() > longer.size()) return false;
  return std::equal(shorter.begin(), shorter.end(), longer.begin(),
                    [](char x, char y) { return folded(x) == folded(y); });
}

}  // namespace

std::optional<std::string> closest_name(std::string_view name,
                                        const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = kMaxEdits + 1;
  for (const std::string& candidate : candidates) {
    if (candidate == name) continue;
    std::size_t distance = edit_distance(name, candidate);
    if (distance > allowed_edits(name, candidate)) distance = kMaxEdits + 1;
    if (distance > kMaxEdits && (is_prefix(name, candidate) || is_prefix(candidate, name)))
      distance = kMaxEdits;
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::optional<std::string> closest = closest_name(name, candidates);
  return closest ? "; did you mean '" + *closest + "'?" : "";
}

}  // namespace dynamix
