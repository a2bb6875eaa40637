// CellRecords: temporary file, fsync, rename, fsync of the folder.
#include "apps/cell_records.h"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <system_error>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, const std::string& what) {
  throw InputError(file.string(), 0, "", "a file that can be written durably", what);
}

void sync_path(const fs::path& path, int flags) {
  const int descriptor = ::open(path.c_str(), flags);
  if (descriptor < 0) fail(path, "cannot open it to sync");
  const bool synced = ::fsync(descriptor) == 0;
  ::close(descriptor);
  if (!synced) fail(path, "fsync failed");
}

/// rename() is only durable once the folder holding the name is synced.
void sync_folder(const fs::path& file) {
  fs::path folder = file.parent_path();
  if (folder.empty()) folder = ".";
  sync_path(folder, O_RDONLY | O_DIRECTORY);
}

/// The bytes reach the disk before the name does, so a name never shows a partial record.
void publish(const fs::path& staged, const fs::path& file) {
  sync_path(staged, O_RDONLY);
  std::error_code error;
  fs::rename(staged, file, error);
  if (error) fail(file, error.message());
}

std::string index_name(std::size_t index) {
  std::string name = std::to_string(index);
  return std::string(name.size() < 6 ? 6 - name.size() : 0, '0') + name;
}

/// Writes `text` to `staged`, the temporary name of `file`.
void write_staged(const fs::path& staged, const fs::path& file, std::string_view text) {
  std::ofstream out(staged, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) fail(file, "a write error");
}

}  // namespace

void write_durably(const fs::path& file, std::string_view text) {
  fs::path staged = file;
  staged += ".tmp";
  write_staged(staged, file, text);
  publish(staged, file);
  sync_folder(file);
}

CellRecords::CellRecords(fs::path folder) : folder_(std::move(folder)) {
  std::error_code error;
  fs::create_directories(folder_, error);
  if (error) fail(folder_, error.message());
}

fs::path CellRecords::record(std::size_t index) const {
  return folder_ / (index_name(index) + ".csv");
}

fs::path CellRecords::staging(std::size_t index) const {
  fs::path staged = record(index);
  staged += ".tmp";
  return staged;
}

// The folder is not synced per record: a crash may forget the newest names (those episodes run
// again on --resume) but never shows a partial record, and one sync fewer halves the cost.
void CellRecords::commit(std::size_t index) const { publish(staging(index), record(index)); }

void CellRecords::write(std::size_t index, std::string_view text) const {
  write_staged(staging(index), record(index), text);
  commit(index);
}

std::optional<std::string> CellRecords::read(std::size_t index) const {
  std::ifstream in(record(index), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace dynamix
