// Closest names by Levenshtein distance, for suggestions in error messages.
#include "sim/io/closest_name.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace dynamix {
namespace {

constexpr std::size_t kMaxEdits = 2;
/// A prefix shorter than this matches too much to suggest anything ("a" of every key).
constexpr std::size_t kMinPrefix = 3;

char folded(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::string folded(std::string_view text) {
  std::string result(text);
  std::transform(result.begin(), result.end(), result.begin(), [](char c) { return folded(c); });
  return result;
}

/// Optimal string alignment distance of two folded names, capped at kMaxEdits + 1: Levenshtein
/// with a swap of neighbours as one edit ("snyc" is one edit from "sync"). Any distance beyond
/// kMaxEdits suggests nothing, so names whose lengths differ by more are not compared (a long
/// refused value costs no more than a short one), and the rows stop once every cell is beyond.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  constexpr std::size_t kFar = kMaxEdits + 1;
  if (std::max(a.size(), b.size()) - std::min(a.size(), b.size()) > kMaxEdits) return kFar;
  // Three rows of the distance matrix: two back (for a swap), the last, and the one filled.
  std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) last[j] = j;
  std::size_t last_nearest = 0;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    std::size_t nearest = row[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = a[i - 1] == b[j - 1];
      row[j] = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        row[j] = std::min(row[j], before[j - 2] + 1);
      nearest = std::min(nearest, row[j]);
    }
    // Every cell comes from the row above, or from two rows up with one edit more: once two
    // rows in a row are beyond kMaxEdits, so is every later one.
    if (nearest > kMaxEdits && last_nearest > kMaxEdits) return kFar;
    last_nearest = nearest;
    std::swap(before, last);
    std::swap(last, row);
  }
  return std::min(last[b.size()], kFar);
}

/// Two edits turn any short name into any other ("B200" into "A100"): a third of the longer
/// name's length, at least one and at most kMaxEdits.
std::size_t allowed_edits(std::string_view a, std::string_view b) {
  return std::clamp<std::size_t>(std::max(a.size(), b.size()) / 3, 1, kMaxEdits);
}

/// Of two folded names.
bool is_prefix(std::string_view shorter, std::string_view longer) {
  if (shorter.size() < kMinPrefix || shorter.size() > longer.size()) return false;
  return longer.starts_with(shorter);
}

}  // namespace

std::optional<std::string> closest_name(std::string_view name,
                                        const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = kMaxEdits + 1;
  const std::string given = folded(name);
  for (const std::string& candidate : candidates) {
    if (candidate == name) continue;
    const std::string known = folded(candidate);
    std::size_t distance = edit_distance(given, known);
    if (distance > allowed_edits(name, candidate)) distance = kMaxEdits + 1;
    if (distance > kMaxEdits && (is_prefix(given, known) || is_prefix(known, given)))
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
