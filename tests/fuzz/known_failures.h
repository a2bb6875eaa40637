// Contract failures whose fix is pending elsewhere: the corpus run and libFuzzer tolerate them
// until the entry is removed. Remove an entry once its fix is in; the corpus run then says so.
#pragma once

#include <array>
#include <string_view>

namespace dynamix::fuzz {

/// One pending bug: a seed of tests/fuzz/corpus/<target>/ by file name, or any input whose
/// failure message contains the phrase.
struct KnownFailure {
  std::string_view target;
  std::string_view seed_or_message;
  /// The bug, and the file that will fix it.
  std::string_view why;
};

inline constexpr std::array<KnownFailure, 0> kKnownFailures = {};

/// The entry covering this failure of `target` on the seed `seed` (or a mutant, seed empty),
/// whose message is `message` (empty to match by seed only); nullptr if none.
inline const KnownFailure* known_failure(std::string_view target, std::string_view seed,
                                         std::string_view message) {
  for (const KnownFailure& known : kKnownFailures) {
    if (known.target != target) continue;
    if (known.seed_or_message == seed ||
        (!message.empty() && message.find(known.seed_or_message) != std::string_view::npos)) {
      return &known;
    }
  }
  return nullptr;
}

}  // namespace dynamix::fuzz
