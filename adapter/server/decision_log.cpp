// JSON-lines decision logs: appended with one write per record, read back for replay.
#include "adapter/server/decision_log.h"

#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include "sim/io/input_error.h"
#include "sim/io/sources.h"

namespace dynamix {

namespace pb_util = ::google::protobuf::util;

namespace {

/// name.K.jsonl beside name.jsonl.
std::filesystem::path rotated_file(const std::filesystem::path& directory, std::string_view name,
                                   int index) {
  const std::string stem(name.substr(0, name.rfind('.')));
  return directory / (stem + "." + std::to_string(index) + ".jsonl");
}

InputError log_error(const std::filesystem::path& path, const std::string& expected) {
  return InputError("--log", 0, "", expected,
                    "'" + path.string() + "' (" + std::strerror(errno) + ")");
}

/// Length of `descriptor`'s file up to and including its last newline.
std::uint64_t complete_length(int descriptor, std::uint64_t size) {
  char buffer[4096];
  std::uint64_t end = size;
  while (end > 0) {
    const std::uint64_t start = end > sizeof buffer ? end - sizeof buffer : 0;
    const ssize_t got = ::pread(descriptor, buffer, end - start, static_cast<off_t>(start));
    if (got != static_cast<ssize_t>(end - start)) return size;
    for (std::uint64_t i = end - start; i > 0; --i) {
      if (buffer[i - 1] == '\n') return start + i;
    }
    end = start;
  }
  return 0;
}

}  // namespace

std::vector<std::filesystem::path> decision_log_files(const std::filesystem::path& directory,
                                                      std::string_view name) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (int index = 1; std::filesystem::exists(rotated_file(directory, name, index), error);
       ++index) {
    files.insert(files.begin(), rotated_file(directory, name, index));
  }
  if (std::filesystem::exists(directory / name, error)) files.push_back(directory / name);
  return files;
}

DecisionLogWriter::DecisionLogWriter(const std::filesystem::path& directory,
                                     const DecisionLogOptions& options)
    : directory_(directory),
      options_(options),
      decisions_{.name = kDecisionLogName, .file = directory / kDecisionLogName},
      refusals_{.name = kRefusalLogName, .file = directory / kRefusalLogName} {
  const std::filesystem::path lock = directory / kDecisionLogLock;
  lock_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (lock_ < 0) throw log_error(lock, "a writable log directory");
  if (::flock(lock_, LOCK_EX | LOCK_NB) != 0) {
    ::close(lock_);
    throw InputError("--log", 0, "", "a log directory no other dynamix serve is writing",
                     "'" + directory.string() + "', which another dynamix serve holds");
  }
  for (Stream* stream : {&decisions_, &refusals_}) {
    open(*stream);
    struct stat status {};
    ::fstat(stream->descriptor, &status);
    stream->size = static_cast<std::uint64_t>(status.st_size);
    const std::uint64_t complete = complete_length(stream->descriptor, stream->size);
    if (complete < stream->size) {
      if (::ftruncate(stream->descriptor, static_cast<off_t>(complete)) != 0) {
        throw log_error(stream->file, "a log whose torn last line can be cut");
      }
      repaired_bytes_ += stream->size - complete;
      stream->size = complete;
    }
  }
}

void DecisionLogWriter::open(Stream& stream) {
  stream.descriptor =
      ::open(stream.file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (stream.descriptor < 0) throw log_error(stream.file, "a writable log file");
}

void DecisionLogWriter::rotate(Stream& stream) {
  ::close(stream.descriptor);
  stream.descriptor = -1;
  std::error_code error;
  std::filesystem::remove(rotated_file(directory_, stream.name, options_.keep), error);
  for (int index = options_.keep - 1; index >= 1; --index) {
    std::filesystem::rename(rotated_file(directory_, stream.name, index),
                            rotated_file(directory_, stream.name, index + 1), error);
  }
  if (options_.keep >= 1) {
    std::filesystem::rename(stream.file, rotated_file(directory_, stream.name, 1), error);
  } else {
    std::filesystem::remove(stream.file, error);
  }
  open(stream);
  stream.size = 0;
}

DecisionLogWriter::~DecisionLogWriter() {
  for (const Stream* stream : {&decisions_, &refusals_}) {
    if (stream->descriptor >= 0) ::close(stream->descriptor);
  }
  if (lock_ >= 0) ::close(lock_);
}

void DecisionLogWriter::append(const ::dynamix::adapter::v1::LogRecord& record) {
  Stream& stream = record.refusal().empty() ? decisions_ : refusals_;
  pb_util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string line;
  if (!pb_util::MessageToJsonString(record, &line, options).ok()) {
    throw std::runtime_error(stream.file.string() + ": a record could not be written as JSON");
  }
  line += '\n';
  if (stream.size > 0 && stream.size + line.size() > options_.max_bytes) rotate(stream);
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t result = ::write(stream.descriptor, line.data() + written, line.size() - written);
    if (result < 0 && errno == EINTR) continue;
    if (result <= 0) {
      throw std::runtime_error(stream.file.string() + ": write failed (" + std::strerror(errno) +
                               ")");
    }
    written += static_cast<std::size_t>(result);
  }
  stream.size += written;
}

DecisionLog read_decision_log(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), 0, "", "a dynamix serve decision log", "no such file");
  DecisionLog log;
  std::string line;
  const std::uintmax_t limit = max_input_bytes();
  for (int number = 1;; ++number) {
    const LineRead read = read_line(in, line, limit);
    if (read == LineRead::kEnd) break;
    if (read == LineRead::kUnterminated) {  // the record a kill interrupted
      log.truncated_tail = true;
      break;
    }
    if (read == LineRead::kTooLong) {
      throw InputError(file.string(), number, "",
                       "a LogRecord of at most " + std::to_string(limit) + " bytes (" +
                           kMaxInputBytesVariable + " raises the limit)",
                       excerpt(line) + "...");
    }
    ::dynamix::adapter::v1::LogRecord record;
    const auto status = pb_util::JsonStringToMessage(line, &record);
    if (!status.ok()) {
      throw InputError(file.string(), number, "", "one LogRecord as JSON per line",
                       excerpt(line) + " (" + std::string(status.message()) + ")");
    }
    log.records.push_back(std::move(record));
  }
  return log;
}

std::uint64_t count_decision_log_records(const std::filesystem::path& directory,
                                         std::string_view name) {
  std::uint64_t records = 0;
  for (const std::filesystem::path& file : decision_log_files(directory, name)) {
    std::ifstream in(file, std::ios::binary);
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      records += static_cast<std::uint64_t>(std::count(buffer, buffer + in.gcount(), '\n'));
    }
  }
  return records;
}

DecisionLog read_decision_log_directory(const std::filesystem::path& directory,
                                        std::string_view name) {
  const std::vector<std::filesystem::path> files = decision_log_files(directory, name);
  if (files.empty() && name == kDecisionLogName) {
    throw InputError((directory / kDecisionLogName).string(), 0, "", "a dynamix serve decision log",
                     "no such file");
  }
  DecisionLog log;
  for (const std::filesystem::path& file : files) {
    DecisionLog part = read_decision_log(file);
    for (auto& record : part.records) log.records.push_back(std::move(record));
    log.truncated_tail = part.truncated_tail;
  }
  return log;
}

}  // namespace dynamix
