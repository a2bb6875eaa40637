// SHA-256 of policy files: what a user pins, or names to trust a file's own code.
#pragma once

#include <string>
#include <string_view>

namespace dynamix {

/// SHA-256 of bytes, lower-case hex.
std::string sha256_of(std::string_view bytes);

/// `hex` in lower case; InputError naming `option` unless it is 64 hexadecimal digits.
std::string checked_sha256(std::string hex, const std::string& option);

/// PolicyFileError naming `file` unless `found`, the file's SHA-256, is `pinned`, the one
/// `option` names (both lower-case hex).
void require_pinned(const std::string& found, const std::string& pinned, std::string_view option,
                    const std::string& file);

}  // namespace dynamix
