// Files written so that a crash, a full disk or a file-size limit leaves either the whole file
// or none of it, never a partial one under the final name, and never an exception from a
// destructor.
#pragma once

#include <filesystem>
#include <string_view>

namespace dynamix {

/// Writes `text` to `staged`, the temporary name of `file`; InputError naming `file` on any
/// write error.
void write_staged(const std::filesystem::path& staged, const std::filesystem::path& file,
                  std::string_view text);
/// Flushes `staged` to disk (fsync) and renames it to `file`: the bytes reach the disk before
/// the name does.
void publish(const std::filesystem::path& staged, const std::filesystem::path& file);
/// Syncs the folder holding `file`: a rename is only durable once its folder is.
void sync_folder(const std::filesystem::path& file);
/// Writes `text` to `file` through a temporary sibling, flushed, renamed into place, and its
/// folder synced: after a crash `file` holds all of `text` or is as it was. InputError naming
/// the file when it cannot be written (the temporary is removed).
void write_durably(const std::filesystem::path& file, std::string_view text);

}  // namespace dynamix
