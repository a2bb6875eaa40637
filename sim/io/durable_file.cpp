// Temporary file, fsync, rename, fsync of the folder.
#include "sim/io/durable_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const fs::path& file, const std::string& what) {
  throw InputError(file.string(), 0, "", "a file that can be written durably", what);
}

void sync_path(const fs::path& path, int flags) {
  const int descriptor = ::open(path.c_str(), flags | O_CLOEXEC);
  if (descriptor < 0) fail(path, "cannot open it to sync");
  const bool synced = ::fsync(descriptor) == 0;
  ::close(descriptor);
  if (!synced) fail(path, "fsync failed");
}

}  // namespace

void write_staged(const fs::path& staged, const fs::path& file, std::string_view text) {
  std::ofstream out(staged, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out.flush()) {
    const std::string why = errno != 0 ? std::strerror(errno) : "a write error";
    out.close();
    std::error_code ignored;
    fs::remove(staged, ignored);
    fail(file, why);
  }
}

void publish(const fs::path& staged, const fs::path& file) {
  sync_path(staged, O_RDONLY);
  std::error_code error;
  fs::rename(staged, file, error);
  if (error) fail(file, error.message());
}

void sync_folder(const fs::path& file) {
  fs::path folder = file.parent_path();
  if (folder.empty()) folder = ".";
  sync_path(folder, O_RDONLY | O_DIRECTORY);
}

void write_durably(const fs::path& file, std::string_view text) {
  fs::path staged = file;
  staged += ".tmp";
  write_staged(staged, file, text);
  publish(staged, file);
  sync_folder(file);
}

}  // namespace dynamix
