// File reading with the embedded fallback.
#include "sim/io/sources.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <istream>
#include <sstream>

#include "sim/io/input_error.h"

namespace dynamix {

std::uintmax_t max_input_bytes() {
  const char* const text = std::getenv(kMaxInputBytesVariable);
  if (text == nullptr || *text == '\0') return kMaxInputBytes;
  std::uintmax_t bytes = 0;
  const char* const end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, bytes);
  if (error != std::errc() || stop != end || bytes == 0) {
    throw InputError(kMaxInputBytesVariable, 0, "", "a number of bytes >= 1", excerpt(text));
  }
  return bytes;
}

std::string read_text(const std::string& path) {
  if (path.starts_with(kEmbeddedPrefix)) {
    const std::string_view name = std::string_view(path).substr(kEmbeddedPrefix.size());
    for (const auto& file : detail::embedded_files()) {
      if (file.path == name) return std::string(file.text);
    }
    throw InputError(path, 0, "", "one of the files embedded in dynamix", "no such file");
  }
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  const std::string shown = path.size() > 256 ? excerpt(path) : path;
  if (status.type() == std::filesystem::file_type::not_found) {
    throw InputError(shown, 0, "", "a readable file", "No such file or directory");
  }
  if (error) throw InputError(shown, 0, "", "a readable file", error.message());
  if (!std::filesystem::is_regular_file(status)) {
    throw InputError(path, 0, "", "a regular file",
                     std::filesystem::is_directory(status) ? "a directory" : "a special file");
  }
  const std::uintmax_t limit = max_input_bytes();
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > limit) {
    throw InputError(shown, 0, "",
                     "a file of at most " + std::to_string(limit) + " bytes (" +
                         kMaxInputBytesVariable + " raises the limit)",
                     std::to_string(size) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "a readable file", std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

LineRead read_line(std::istream& in, std::string& line, std::size_t limit) {
  line.clear();
  std::streambuf* const buffer = in.rdbuf();
  for (int c = buffer->sbumpc(); c != std::char_traits<char>::eof(); c = buffer->sbumpc()) {
    if (c == '\n') return LineRead::kLine;
    if (line.size() == limit) return LineRead::kTooLong;
    line.push_back(static_cast<char>(c));
  }
  in.setstate(std::ios::eofbit);
  return line.empty() ? LineRead::kEnd : LineRead::kUnterminated;
}

std::string resolve_path(const std::string& base, const std::string& reference) {
  if (reference.starts_with(kEmbeddedPrefix)) return reference;
  const std::filesystem::path relative(reference);
  if (relative.is_absolute()) return reference;
  if (base.starts_with(kEmbeddedPrefix)) {
    const std::filesystem::path inside(base.substr(kEmbeddedPrefix.size() - 1));
    return std::string(kEmbeddedPrefix.substr(0, kEmbeddedPrefix.size() - 1)) +
           (inside.parent_path() / relative).lexically_normal().generic_string();
  }
  return (std::filesystem::path(base).parent_path() / relative).lexically_normal().string();
}

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::string join(std::span<const std::string> words) {
  std::string text;
  for (const std::string& word : words) {
    if (!text.empty()) text += ", ";
    text += word;
  }
  return text;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t begin = 0;
  while (true) {
    const auto comma = line.find(',', begin);
    fields.push_back(trim(line.substr(begin, comma - begin)));
    if (comma == std::string_view::npos) return fields;
    begin = comma + 1;
  }
}

std::vector<std::string> embedded_paths() {
  std::vector<std::string> paths;
  for (const auto& file : detail::embedded_files()) paths.emplace_back(file.path);
  return paths;
}

}  // namespace dynamix
