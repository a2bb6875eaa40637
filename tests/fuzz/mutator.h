// Deterministic mutations of text inputs: the byte-level and structure-aware edits the corpus
// runner applies to each seed, reproducible from one 64-bit seed.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace dynamix::fuzz {

/// A small, fixed pseudo-random generator (splitmix64): the same seed gives the same mutants
/// with every compiler and standard library.
class MutationRng {
 public:
  explicit MutationRng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();
  /// Uniform in [0, bound); bound > 0.
  std::size_t below(std::size_t bound) { return static_cast<std::size_t>(next() % bound); }

 private:
  std::uint64_t state_;
};

/// Applies 1 to 3 mutations to `seed_text`: bit flips, byte inserts and deletes, numbers
/// replaced by edge values (0, -1, 1e300, 3000000000, NaN, ...), values emptied, lines
/// duplicated (duplicate keys), deleted or swapped, very long strings, YAML specials, and
/// lines spliced in from `others` (the target's other seeds).
std::string mutate(const std::string& seed_text, std::span<const std::string> others,
                   MutationRng& rng);

}  // namespace dynamix::fuzz
