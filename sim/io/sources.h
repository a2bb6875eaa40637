// Reading input files from disk or from the copies embedded in the binary.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dynamix {

/// Paths starting with this prefix name files compiled into the binary, e.g.
/// "embedded:/scenarios/quickstart.yaml"; relative references inside them resolve there too.
inline constexpr std::string_view kEmbeddedPrefix = "embedded:/";

/// The contents of a file; an InputError naming the path if it cannot be read.
std::string read_text(const std::string& path);
/// `reference` as seen from the file `base` (absolute references are kept).
std::string resolve_path(const std::string& base, const std::string& reference);
/// `text` without leading and trailing spaces, tabs and carriage returns.
std::string_view trim(std::string_view text);
/// The comma-separated fields of one CSV line, each trimmed (no quoting).
std::vector<std::string_view> split_fields(std::string_view line);
/// The repository-relative names of every embedded file.
std::vector<std::string> embedded_paths();

namespace detail {
struct EmbeddedFile {
  std::string_view path;
  std::string_view text;
};
std::span<const EmbeddedFile> embedded_files();
}  // namespace detail

}  // namespace dynamix
