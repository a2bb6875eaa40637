// The arbitrator's log: every report and the decision (or refusal) it got, one JSON line each,
// written so that a killed arbitrator leaves every answered report on disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>
#include <vector>

#include "adapter/proto/dynamix.pb.h"

namespace dynamix {

/// The log's file name inside `dynamix serve --log DIR`.
inline constexpr std::string_view kDecisionLogName = "decisions.jsonl";
/// Refused reports' records, apart: a flood of refusals rotates only its own files, never the
/// decisions out.
inline constexpr std::string_view kRefusalLogName = "refusals.jsonl";
/// The lock file a running `dynamix serve` holds in its log directory.
inline constexpr std::string_view kDecisionLogLock = "serve.lock";

struct DecisionLogOptions {
  /// Size at which the log is rotated: decisions.jsonl becomes decisions.1.jsonl, .1 becomes .2,
  /// and so on.
  std::uint64_t max_bytes = 256ull << 20;
  /// Rotated files kept beside the live one; the oldest beyond them is removed.
  int keep = 4;
};

/// The log's files in `directory`, oldest first: decisions.K.jsonl ... decisions.1.jsonl,
/// decisions.jsonl (those that exist); `name` kRefusalLogName for the refusals'.
std::vector<std::filesystem::path> decision_log_files(const std::filesystem::path& directory,
                                                      std::string_view name = kDecisionLogName);

/// Appends LogRecords as protobuf JSON (the fields that were set, named as in dynamix.proto), one
/// line each, with one write(2) per record: what was answered is on disk even if the process is
/// killed. Decisions go to decisions.jsonl, refusals to refusals.jsonl, each rotated on its own.
/// One writer per directory: a second is refused while the first lives.
class DecisionLogWriter {
 public:
  /// Locks `directory` (InputError naming --log if another writer holds it), opens (creating if
  /// needed) its decisions.jsonl and refusals.jsonl for appending, and cuts a torn last line (a
  /// record a kill or a full disk interrupted), so that new records never follow a partial one.
  DecisionLogWriter(const std::filesystem::path& directory, const DecisionLogOptions& options);
  ~DecisionLogWriter();
  DecisionLogWriter(const DecisionLogWriter&) = delete;
  DecisionLogWriter& operator=(const DecisionLogWriter&) = delete;

  /// A record with a refusal goes to refusals.jsonl. Throws std::runtime_error naming the file
  /// when the write fails.
  void append(const ::dynamix::adapter::v1::LogRecord& record);
  /// Bytes of torn last lines cut when the log was opened (0: none).
  std::uint64_t repaired_bytes() const { return repaired_bytes_; }
  /// The decisions' live file.
  const std::filesystem::path& file() const { return decisions_.file; }

 private:
  /// One of the two record streams: its live file and size.
  struct Stream {
    std::string_view name;
    std::filesystem::path file;
    int descriptor = -1;
    std::uint64_t size = 0;
  };
  void open(Stream& stream);
  void rotate(Stream& stream);

  std::filesystem::path directory_;
  DecisionLogOptions options_;
  int lock_ = -1;
  Stream decisions_;
  Stream refusals_;
  std::uint64_t repaired_bytes_ = 0;
};

struct DecisionLog {
  std::vector<::dynamix::adapter::v1::LogRecord> records;
  /// The last line had no newline: a record a kill cut short, left out of `records`.
  bool truncated_tail = false;
};

/// Reads a log file; InputError naming the file and line of a malformed record.
DecisionLog read_decision_log(const std::filesystem::path& file);
/// The complete records (lines) of a log directory's `name` files, counted without parsing them:
/// a refusal flood's files can be large, and replay only reports how many they hold.
std::uint64_t count_decision_log_records(const std::filesystem::path& directory,
                                         std::string_view name);
/// Reads every file of a log directory's decisions, oldest first (decision_log_files); with
/// `name` kRefusalLogName its refusals' (none is no error: a log older than the split has them
/// among the decisions).
DecisionLog read_decision_log_directory(const std::filesystem::path& directory,
                                        std::string_view name = kDecisionLogName);

}  // namespace dynamix
