// Reading input files from disk or from the copies embedded in the binary.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dynamix {

/// Paths starting with this prefix name files compiled into the binary, e.g.
/// "embedded:/scenarios/quickstart.yaml"; relative references inside them resolve there too.
inline constexpr std::string_view kEmbeddedPrefix = "embedded:/";

/// The largest input file read_text takes, unless the environment variable
/// kMaxInputBytesVariable gives another number of bytes: parsing holds several times a file's
/// size in memory (YAML about 500 bytes a value), so the bound comes before any parsing.
inline constexpr std::uintmax_t kMaxInputBytes = std::uintmax_t{16} << 20;
inline constexpr const char* kMaxInputBytesVariable = "DYNAMIX_MAX_INPUT_BYTES";
/// The bound in force: kMaxInputBytesVariable's value, else kMaxInputBytes; InputError on a
/// value that is not a number of bytes >= 1.
std::uintmax_t max_input_bytes();

/// The contents of a file; an InputError naming the path if it cannot be read or is larger than
/// max_input_bytes().
std::string read_text(const std::string& path);
/// How read_line ended: a whole line, a last line without its newline, the end of the stream,
/// or a line longer than the limit (the stream is then left inside it).
enum class LineRead { kLine, kUnterminated, kEnd, kTooLong };
/// Reads one line of at most `limit` bytes (newline excluded) into `line`: memory stays bounded
/// by the limit whatever the stream holds, where std::getline grows with the line.
LineRead read_line(std::istream& in, std::string& line, std::size_t limit);
/// `reference` as seen from the file `base` (absolute references are kept).
std::string resolve_path(const std::string& base, const std::string& reference);
/// `text` without leading and trailing spaces, tabs and carriage returns.
std::string_view trim(std::string_view text);
/// `words` separated by ", ", for the lists of valid choices in messages.
std::string join(std::span<const std::string> words);
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
