// The arbitrator's log: every report and the decision (or refusal) it got, one JSON line each,
// written so that a killed arbitrator leaves every answered report on disk.
#pragma once

#include <filesystem>
#include <string_view>
#include <vector>

#include "adapter/proto/dynamix.pb.h"

namespace dynamix {

/// The log's file name inside `dynamix serve --log DIR`.
inline constexpr std::string_view kDecisionLogName = "decisions.jsonl";

/// Appends LogRecords as protobuf JSON (the fields that were set, named as in dynamix.proto), one
/// line each, with one write(2) per record: what was answered is on disk even if the process is
/// killed.
class DecisionLogWriter {
 public:
  /// Opens (creating if needed) `file` for appending; InputError naming it if it cannot.
  explicit DecisionLogWriter(const std::filesystem::path& file);
  ~DecisionLogWriter();
  DecisionLogWriter(const DecisionLogWriter&) = delete;
  DecisionLogWriter& operator=(const DecisionLogWriter&) = delete;

  /// Throws std::runtime_error naming the file when the write fails.
  void append(const ::dynamix::adapter::v1::LogRecord& record);

 private:
  std::filesystem::path file_;
  int descriptor_ = -1;
};

struct DecisionLog {
  std::vector<::dynamix::adapter::v1::LogRecord> records;
  /// The last line had no newline: a record a kill cut short, left out of `records`.
  bool truncated_tail = false;
};

/// Reads a log; InputError naming the file and line of a malformed record.
DecisionLog read_decision_log(const std::filesystem::path& file);

}  // namespace dynamix
