// Output directories that appear complete or not at all, never replace what dynamix did not
// write, and the CSV files inside them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dynamix {

/// Written under a temporary sibling name and renamed into place by commit(), so an interrupted
/// or failed run never leaves a directory that looks complete. Every directory it creates holds
/// a marker file naming the command that wrote it; an existing path without that marker (a
/// user's folder or file, ".", "/", the home folder) is refused before any work starts.
class RunDirectory {
 public:
  enum Staging {
    /// A private staging name, removed unless committed.
    kTemporary,
    /// "DIR.partial", started afresh and kept after an interruption so a run can resume.
    kResumable,
    /// "DIR.partial" as an interrupted run left it.
    kResume,
    /// DIR itself, written in place and kept, for a command that adds to it run after run (a
    /// log): created when new or empty, else it must hold the marker of the same command.
    kAppend,
  };
  /// The marker file's name inside every directory dynamix writes.
  static constexpr std::string_view kMarker = ".dynamix-run";

  /// InputError on `option` when `final_path` or its staging path exists and is not a dynamix
  /// run directory (with kAppend, not one that `command` wrote), or when replacing it would
  /// remove the working directory; `command` goes into the marker.
  RunDirectory(std::filesystem::path final_path, std::string_view command,
               Staging staging = kTemporary, std::string_view option = "--out");
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;
  ~RunDirectory();

  /// The path a file will have once committed, while it is written in the temporary place.
  std::filesystem::path file(std::string_view name) const { return staging_ / name; }
  const std::filesystem::path& final_path() const { return final_; }
  /// Replaces a previous dynamix run directory at the final path with this one (kAppend: nothing
  /// to replace, the files are already in place).
  void commit();

  /// What commit() writes beside the results: the build, the host and the date
  /// (studies/provenance.h).
  static constexpr const char* kProvenanceFile = "provenance.json";

  /// Whether `path` is a directory that dynamix wrote (it holds the marker).
  static bool is_run_directory(const std::filesystem::path& path);

 private:
  std::filesystem::path final_;
  std::filesystem::path staging_;
  Staging mode_;
  std::string option_;
  bool created_staging_ = false;
  bool committed_ = false;
};

/// Refuses, before any work, an output file path that names a directory or an existing file
/// that `is_ours` does not recognize as written by dynamix.
void check_output_file(const std::filesystem::path& file, std::string_view option,
                       bool (*is_ours)(const std::filesystem::path&));

/// A tidy CSV file: a header of unit-suffixed column names, then rows of the same width.
class CsvWriter {
 public:
  CsvWriter(const std::filesystem::path& path, const std::vector<std::string>& columns);
  /// A CSV kept in memory: text() gives it.
  explicit CsvWriter(const std::vector<std::string>& columns);
  CsvWriter& operator<<(double value);
  CsvWriter& operator<<(std::int64_t value);
  CsvWriter& operator<<(int value) { return *this << static_cast<std::int64_t>(value); }
  CsvWriter& operator<<(std::size_t value) { return *this << static_cast<std::int64_t>(value); }
  CsvWriter& operator<<(std::string_view value);
  /// An empty field where there is no value.
  CsvWriter& operator<<(const std::optional<double>& value);
  /// Ends the current row; it must have exactly one value per column.
  void end_row();
  /// A row as written before (a resumed run's earlier rows), fields unquoted.
  void row_text(std::string_view line);
  /// Writes what the rows so far hold to the file (a run that may be interrupted).
  void flush();
  /// Flushes and reports a write failure as an error naming the file.
  void close();
  /// What an in-memory writer holds, its last row ended.
  const std::string& text() const { return buffer_; }

 private:
  void separate();

  std::filesystem::path path_;
  std::ofstream out_;
  std::size_t columns_;
  std::size_t fields_in_row_ = 0;
  std::string buffer_;
};

}  // namespace dynamix
