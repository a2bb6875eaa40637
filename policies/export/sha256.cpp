// SHA-256 with libcrypto.
#include "policies/export/sha256.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <iomanip>
#include <sstream>

#include "policies/export/policy_metadata.h"
#include "sim/io/input_error.h"

namespace dynamix {

std::string sha256_of(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  std::ostringstream hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(digest[i]);
  }
  return hex.str();
}

void require_pinned(const std::string& found, const std::string& pinned, std::string_view option,
                    const std::string& file) {
  if (found == pinned) return;
  throw PolicyFileError(file, 0, "", "the file " + std::string(option) + " names (" + pinned + ")",
                        "a file of sha256 " + found);
}

std::string checked_sha256(std::string hex, const std::string& option) {
  std::transform(hex.begin(), hex.end(), hex.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (hex.size() != 64 || !std::all_of(hex.begin(), hex.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
      })) {
    throw InputError(option, 0, "", "64 hexadecimal digits", "'" + excerpt(hex) + "'");
  }
  return hex;
}

}  // namespace dynamix
