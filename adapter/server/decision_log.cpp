// JSON-lines decision logs: appended with one write per record, read back for replay.
#include "adapter/server/decision_log.h"

#include <fcntl.h>
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

#include "sim/io/input_error.h"

namespace dynamix {

namespace pb_util = ::google::protobuf::util;

DecisionLogWriter::DecisionLogWriter(const std::filesystem::path& file) : file_(file) {
  descriptor_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (descriptor_ < 0) {
    throw InputError("--log", 0, "", "a writable log file",
                     "'" + file.string() + "' (" + std::strerror(errno) + ")");
  }
}

DecisionLogWriter::~DecisionLogWriter() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

void DecisionLogWriter::append(const ::dynamix::adapter::v1::LogRecord& record) {
  pb_util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  std::string line;
  if (!pb_util::MessageToJsonString(record, &line, options).ok()) {
    throw std::runtime_error(file_.string() + ": a record could not be written as JSON");
  }
  line += '\n';
  std::size_t written = 0;
  while (written < line.size()) {
    const ssize_t result = ::write(descriptor_, line.data() + written, line.size() - written);
    if (result < 0 && errno == EINTR) continue;
    if (result <= 0) {
      throw std::runtime_error(file_.string() + ": write failed (" + std::strerror(errno) + ")");
    }
    written += static_cast<std::size_t>(result);
  }
}

DecisionLog read_decision_log(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), 0, "", "a dynamix serve decision log", "no such file");
  DecisionLog log;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (in.eof()) {  // no newline: the record a kill interrupted
      log.truncated_tail = !line.empty();
      break;
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

}  // namespace dynamix
