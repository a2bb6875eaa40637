// CellRecords: temporary file, fsync, rename, fsync of the folder.
#include "studies/cell_records.h"

#include <filesystem>
#include <system_error>

#include "sim/io/durable_file.h"
#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, const std::string& what) {
  throw InputError(file.string(), 0, "", "a file that can be written durably", what);
}

std::string index_name(std::size_t index) {
  std::string name = std::to_string(index);
  return std::string(name.size() < 6 ? 6 - name.size() : 0, '0') + name;
}

}  // namespace

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
  if (!std::filesystem::exists(record(index))) return std::nullopt;
  return read_text(record(index).string());
}

}  // namespace dynamix
