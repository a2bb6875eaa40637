// SHA-256 (FIPS 180-4) of bytes, without a library: policy files' pins and the hashes of the
// inputs a run records (run.json's provenance) in every build.
#pragma once

#include <string>
#include <string_view>

namespace dynamix {

/// SHA-256 of bytes, lower-case hex.
std::string sha256_of(std::string_view bytes);

/// `hex` in lower case; InputError naming `option` unless it is 64 hexadecimal digits.
std::string checked_sha256(std::string hex, const std::string& option);

}  // namespace dynamix
