// A fingerprint of a text that stays the same across runs, builds and machines.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace dynamix {

/// FNV-1a (64 bits) of `text`: cheap, and the same wherever it runs, so that a resume or another
/// rank can tell whether it was given the same definition. Not for anything an adversary writes.
constexpr std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : text) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return hash;
}

/// fnv1a of `text` as 16 lower-case hex digits.
inline std::string hex_fingerprint(std::string_view text) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return hex;
}

}  // namespace dynamix
