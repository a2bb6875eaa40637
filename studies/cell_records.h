// The finished cells of a resumable sweep, one file per cell, each made durable before it
// counts as finished, so a killed sweep loses at most the cells that were running.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "sim/io/durable_file.h"

namespace dynamix {

/// Cell records in one folder, named by the cell's index. Distinct cells may be written from
/// different threads at once.
class CellRecords {
 public:
  /// Creates `folder` if needed.
  explicit CellRecords(std::filesystem::path folder);

  /// Where a cell's record is written before commit() makes it count.
  std::filesystem::path staging(std::size_t index) const;
  /// Makes the staged record of `index` durable (its bytes on disk, then its name) and finished.
  void commit(std::size_t index) const;
  /// Stages `text` as the record of `index` and commits it.
  void write(std::size_t index, std::string_view text) const;
  /// The record of a finished cell; none when the cell has not finished.
  std::optional<std::string> read(std::size_t index) const;
  /// The file a finished cell's record is in.
  std::filesystem::path record(std::size_t index) const;

 private:
  std::filesystem::path folder_;
};

}  // namespace dynamix
