// Programs dynamix starts itself (the measurement script, the report notebooks, band's training
// runs): started without a shell, waited for, their status reported as a shell would.
#pragma once

#include <string>
#include <vector>

namespace dynamix {

/// How a child runs; empty fields inherit this process's.
struct ChildOptions {
  /// The environment, as NAME=VALUE entries.
  std::vector<std::string> environment = {};
  /// Files its standard output and error go to (truncated).
  std::string stdout_path = {};
  std::string stderr_path = {};
  /// Find command[0] on PATH (posix_spawnp) instead of taking it as a path.
  bool search_path = false;
};

struct ChildResult {
  /// errno when the child could not start, else 0.
  int start_error = 0;
  /// The raw wait status (WIFEXITED, WEXITSTATUS, ...).
  int wait_status = 0;
  /// Its exit status, or 128 + the signal that ended it, as a shell reports it.
  int status() const;
};

/// Runs `command` and waits for it.
ChildResult run_child(const std::vector<std::string>& command, const ChildOptions& options = {});

/// `text` split at whitespace (no quoting: options that take no spaces).
std::vector<std::string> split_words(const std::string& text);

}  // namespace dynamix
