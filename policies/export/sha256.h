// SHA-256 of policy files: what a user pins, or names to trust a file's own code.
#pragma once

#include <string>
#include <string_view>

#include "sim/io/sha256.h"

namespace dynamix {

/// PolicyFileError naming `file` unless `found`, the file's SHA-256, is `pinned`, the one
/// `option` names (both lower-case hex).
void require_pinned(const std::string& found, const std::string& pinned, std::string_view option,
                    const std::string& file);

}  // namespace dynamix
