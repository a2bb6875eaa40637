// Pins of policy files by their SHA-256.
#include "policies/export/sha256.h"

#include "policies/export/policy_metadata.h"
#include "sim/io/input_error.h"

namespace dynamix {

void require_pinned(const std::string& found, const std::string& pinned, std::string_view option,
                    const std::string& file) {
  if (found == pinned) return;
  throw PolicyFileError(file, 0, "", "the file " + std::string(option) + " names (" + pinned + ")",
                        "a file of sha256 " + found);
}

}  // namespace dynamix
