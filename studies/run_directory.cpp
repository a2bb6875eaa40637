// RunDirectory, output-file checks and CsvWriter.
#include "studies/run_directory.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <system_error>

#include "sim/core/check.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"
#include "sim/io/sources.h"
#include "studies/provenance.h"
#include "studies/version.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;

bool exists_here(const fs::path& path) {
  std::error_code ignored;
  return fs::exists(fs::symlink_status(path, ignored));
}

/// The absolute path with ".", ".." and the symbolic links of its existing part resolved.
fs::path resolved(const fs::path& path) {
  std::error_code error;
  fs::path result = fs::weakly_canonical(fs::absolute(path), error);
  if (error) result = fs::absolute(path).lexically_normal();
  if (result.has_relative_path() && result.filename().empty()) result = result.parent_path();
  return result;
}

/// An empty folder loses nothing when replaced; anything else must carry the marker.
void refuse_unless_ours(const fs::path& path, const std::string& option) {
  std::error_code error;
  if (!exists_here(path) || RunDirectory::is_run_directory(path)) return;
  if (fs::is_directory(fs::symlink_status(path, error)) && fs::is_empty(path, error)) return;
  throw InputError(option, 0, "",
                   "a new path or a run directory that dynamix wrote (holding " +
                       std::string(RunDirectory::kMarker) + ")",
                   "'" + path.string() + "', which exists and was not written by dynamix");
}

/// Replacing the working directory or one that holds it would pull the floor from under the
/// user (and "--out ." would empty the folder they are in).
void refuse_enclosing(const fs::path& path, const std::string& option) {
  const fs::path target = resolved(path);
  const fs::path working = resolved(fs::current_path());
  const auto [in_target, in_working] =
      std::mismatch(target.begin(), target.end(), working.begin(), working.end());
  if (in_target == target.end() || target == target.root_path()) {
    throw InputError(option, 0, "", "a run directory outside the working directory's path",
                     "'" + path.string() + "', which is or holds " + working.string());
  }
}

std::string pid_text() { return std::to_string(::getpid()); }

bool process_alive(const std::string& pid_digits) {
  if (pid_digits.empty() || pid_digits.size() > 9 ||
      !std::all_of(pid_digits.begin(), pid_digits.end(),
                   [](unsigned char c) { return std::isdigit(c); })) {
    return true;
  }
  return ::kill(static_cast<pid_t>(std::stol(pid_digits)), 0) == 0 || errno != ESRCH;
}

/// Staging folders that dynamix processes killed without warning (SIGKILL, power loss) left
/// beside `final_path`.
void remove_abandoned_staging(const fs::path& final_path) {
  const std::string prefix = final_path.filename().string() + ".partial-";
  std::error_code error;
  fs::directory_iterator entries(resolved(final_path).parent_path(), error);
  if (error) return;
  for (const fs::directory_entry& entry : entries) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(prefix) || process_alive(name.substr(prefix.size()))) continue;
    if (RunDirectory::is_run_directory(entry.path())) fs::remove_all(entry.path(), error);
  }
}

/// The marker naming `command` in `directory`; false if it cannot be written.
bool write_marker(const fs::path& directory, std::string_view command) {
  std::ofstream marker(directory / RunDirectory::kMarker);
  marker << "dynamix " << kDynamixVersion << ' ' << command << '\n';
  return static_cast<bool>(marker.flush());
}

/// Whether `directory`'s marker names `command`.
bool marked_by(const fs::path& directory, std::string_view command) {
  std::string ours = " ";
  ours.append(command).push_back('\n');
  return read_text((directory / RunDirectory::kMarker).string()).find(ours) != std::string::npos;
}

/// A directory that `command` adds to run after run, as given: nothing in it is ever replaced,
/// so the working directory may hold it.
void open_in_place(const fs::path& directory, std::string_view command, const std::string& option) {
  std::string expected = "a new directory or one that dynamix ";
  expected.append(command).append(" wrote");
  const auto refuse = [&](const std::string& why) {
    throw InputError(option, 0, "", expected, "'" + directory.string() + "', which " + why);
  };
  std::error_code error;
  const fs::file_status status = fs::symlink_status(directory, error);
  if (fs::exists(status)) {
    if (!fs::is_directory(status)) refuse("is not a directory");
    if (RunDirectory::is_run_directory(directory)) {
      if (!marked_by(directory, command)) refuse("another dynamix command wrote");
    } else if (!fs::is_empty(directory, error)) {
      refuse("exists and was not written by dynamix");
    }
  }
  fs::create_directories(directory, error);
  if (error) refuse("cannot be created (" + error.message() + ")");
  if (!RunDirectory::is_run_directory(directory) && !write_marker(directory, command)) {
    refuse("is not writable");
  }
}

bool holds_only_marker(const fs::path& directory) {
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    if (entry.path().filename() != RunDirectory::kMarker) return false;
  }
  return !error;
}

}  // namespace

RunDirectory::RunDirectory(fs::path final_path, std::string_view command, Staging staging,
                           std::string_view option)
    : final_(std::move(final_path)), mode_(staging), option_(option) {
  if (mode_ == kAppend) {
    staging_ = final_;
    open_in_place(final_, command, option_);
    return;
  }
  if (final_.empty()) throw InputError(option_, 0, "", "a path", "nothing");
  if (final_.has_relative_path() && final_.filename().empty()) final_ = final_.parent_path();
  refuse_enclosing(final_, option_);
  refuse_unless_ours(final_, option_);
  staging_ = final_;
  staging_ += mode_ == kTemporary ? ".partial-" + pid_text() : ".partial";
  if (mode_ == kResume) {
    if (!is_run_directory(staging_)) {
      throw InputError("--resume", 0, "", "the folder an interrupted run left",
                       "no run directory '" + staging_.string() + "'");
    }
    return;
  }
  if (mode_ == kTemporary) remove_abandoned_staging(final_);
  std::error_code error;
  if (exists_here(staging_)) {
    refuse_unless_ours(staging_, option_);
    fs::remove_all(staging_, error);
  }
  fs::create_directories(staging_, error);
  if (error) {
    throw InputError(option_, 0, "", "a directory that can be created",
                     "'" + staging_.string() + "' (" + error.message() + ")");
  }
  created_staging_ = true;
  if (!write_marker(staging_, command)) {
    throw InputError(option_, 0, "", "a writable directory", "'" + staging_.string() + "'");
  }
}

RunDirectory::~RunDirectory() {
  if (committed_ || !created_staging_) return;
  std::error_code ignored;
  if (mode_ == kTemporary || holds_only_marker(staging_)) fs::remove_all(staging_, ignored);
}

void RunDirectory::commit() {
  DYNAMIX_CHECK(!committed_, final_.string() << " committed twice");
  if (mode_ == kAppend) {
    committed_ = true;
    return;
  }
  refuse_unless_ours(final_, option_);
  write_host_provenance(staging_ / kProvenanceFile);
  std::error_code error;
  fs::path replaced = final_;
  replaced += ".replaced-" + pid_text();
  const bool replacing = exists_here(final_);
  if (replacing) fs::rename(final_, replaced, error);
  if (!error) fs::rename(staging_, final_, error);
  if (error) {
    std::error_code ignored;
    if (replacing && !exists_here(final_)) fs::rename(replaced, final_, ignored);
    throw InputError(option_, 0, "", "a writable place for the run directory",
                     "'" + final_.string() + "' (" + error.message() + ")");
  }
  committed_ = true;
  if (replacing) fs::remove_all(replaced, error);
}

bool RunDirectory::is_run_directory(const fs::path& path) {
  std::error_code error;
  return fs::is_directory(path, error) && fs::is_regular_file(path / kMarker, error);
}

void check_output_file(const fs::path& file, std::string_view option,
                       bool (*is_ours)(const fs::path&)) {
  const std::string name(option);
  if (file.empty() || !file.has_filename() || file.filename() == "." || file.filename() == "..") {
    throw InputError(name, 0, "", "a file path", "'" + file.string() + "'");
  }
  std::error_code error;
  if (fs::is_directory(file, error)) {
    throw InputError(name, 0, "", "a file path", "'" + file.string() + "', a directory");
  }
  if (exists_here(file) && !is_ours(file)) {
    throw InputError(name, 0, "", "a new file or one that dynamix wrote",
                     "'" + file.string() + "', which exists and was not written by dynamix");
  }
}
CsvWriter::CsvWriter(const std::filesystem::path& path, const std::vector<std::string>& columns)
    : path_(path), out_(path, std::ios::binary), columns_(columns.size()) {
  if (!out_) throw InputError(path.string(), 0, "", "a writable file", "cannot open it");
  for (const auto& column : columns) *this << std::string_view(column);
  end_row();
}

CsvWriter::CsvWriter(const std::vector<std::string>& columns) : columns_(columns.size()) {
  for (const auto& column : columns) *this << std::string_view(column);
  end_row();
}

void CsvWriter::separate() {
  if (fields_in_row_++ > 0) buffer_ += ',';
}

// Numbers go straight into the buffer through std::to_chars, which writes what format_number's
// printf("%.12g") does (the standard defines it so) without its locale and parsing cost: the
// per-iteration files are mostly numbers.
CsvWriter& CsvWriter::operator<<(double value) {
  separate();
  if (!std::isfinite(value)) {
    buffer_ += "null";
  } else if (value == 0) {
    buffer_ += '0';
  } else {
    char text[32];
    const auto result =
        std::to_chars(text, text + sizeof text, value, std::chars_format::general, 12);
    buffer_.append(text, result.ptr);
  }
  return *this;
}

CsvWriter& CsvWriter::operator<<(std::int64_t value) {
  separate();
  char text[24];
  buffer_.append(text, std::to_chars(text, text + sizeof text, value).ptr);
  return *this;
}

CsvWriter& CsvWriter::operator<<(std::string_view value) {
  separate();
  buffer_ += csv_field(value);
  return *this;
}

CsvWriter& CsvWriter::operator<<(const std::optional<double>& value) {
  if (value) return *this << *value;
  separate();
  return *this;
}

void CsvWriter::row_text(std::string_view line) {
  DYNAMIX_CHECK(fields_in_row_ == 0, path_.string() << ": a row is open");
  DYNAMIX_CHECK(static_cast<std::size_t>(std::count(line.begin(), line.end(), ',')) + 1 == columns_,
                path_.string() << ": row '" << line << "' has not " << columns_ << " fields");
  buffer_ += line;
  buffer_ += '\n';
}

void CsvWriter::flush() {
  out_ << buffer_;
  buffer_.clear();
  out_.flush();
}

void CsvWriter::end_row() {
  DYNAMIX_CHECK(fields_in_row_ == columns_,
                path_.string() << ": row has " << fields_in_row_ << " fields, header " << columns_);
  buffer_ += '\n';
  fields_in_row_ = 0;
  if (buffer_.size() > (1 << 16) && out_.is_open()) {
    out_ << buffer_;
    buffer_.clear();
  }
}

void CsvWriter::close() {
  out_ << buffer_;
  buffer_.clear();
  out_.close();
  if (!out_) throw InputError(path_.string(), 0, "", "a file that can be written", "a write error");
}

}  // namespace dynamix
