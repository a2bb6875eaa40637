// RunDirectory and CsvWriter.
#include "apps/run_directory.h"

#include <unistd.h>

#include <system_error>

#include "sim/core/check.h"
#include "sim/io/input_error.h"
#include "sim/io/json_writer.h"

namespace dynamix {

RunDirectory::RunDirectory(std::filesystem::path final_path, Staging staging)
    : final_(std::move(final_path)), mode_(staging) {
  if (final_.filename().empty()) final_ = final_.parent_path();
  staging_ = final_;
  staging_ += mode_ == kTemporary ? ".partial-" + std::to_string(::getpid()) : ".partial";
  std::error_code error;
  if (mode_ != kResume) std::filesystem::remove_all(staging_, error);
  std::filesystem::create_directories(staging_, error);
  if (error) {
    throw InputError("--out", 0, "", "a directory that can be created",
                     final_.string() + " (" + error.message() + ")");
  }
}

RunDirectory::~RunDirectory() {
  if (committed_ || mode_ != kTemporary) return;
  std::error_code ignored;
  std::filesystem::remove_all(staging_, ignored);
}

void RunDirectory::commit() {
  std::error_code error;
  std::filesystem::remove_all(final_, error);
  std::filesystem::rename(staging_, final_, error);
  if (error) {
    throw InputError("--out", 0, "", "a writable place for the run directory",
                     final_.string() + " (" + error.message() + ")");
  }
  committed_ = true;
}

CsvWriter::CsvWriter(const std::filesystem::path& path, std::vector<std::string> columns)
    : path_(path), out_(path, std::ios::binary), columns_(columns.size()) {
  if (!out_) throw InputError(path.string(), 0, "", "a writable file", "cannot open it");
  for (const auto& column : columns) *this << std::string_view(column);
  end_row();
}

void CsvWriter::separate() {
  if (fields_in_row_++ > 0) buffer_ += ',';
}

CsvWriter& CsvWriter::operator<<(double value) {
  separate();
  buffer_ += format_number(value);
  return *this;
}

CsvWriter& CsvWriter::operator<<(std::int64_t value) {
  separate();
  buffer_ += std::to_string(value);
  return *this;
}

CsvWriter& CsvWriter::operator<<(std::string_view value) {
  separate();
  if (value.find_first_of(",\"\n") == std::string_view::npos) {
    buffer_ += value;
    return *this;
  }
  buffer_ += '"';
  for (const char c : value) {
    if (c == '"') buffer_ += '"';
    buffer_ += c;
  }
  buffer_ += '"';
  return *this;
}

void CsvWriter::end_row() {
  DYNAMIX_CHECK(fields_in_row_ == columns_,
                path_.string() << ": row has " << fields_in_row_ << " fields, header " << columns_);
  buffer_ += '\n';
  fields_in_row_ = 0;
  if (buffer_.size() > (1 << 16)) {
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
