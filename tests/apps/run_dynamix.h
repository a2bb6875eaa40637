// Running the built dynamix binary from tests: temporary directories, captured output, CSVs.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fixtures.h"

namespace dynamix::testing {

namespace fs = std::filesystem;

inline const fs::path kSourceDir = DYNAMIX_SOURCE_DIR;

inline std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::string quoted(const std::string& text) { return "'" + text + "'"; }

struct Outcome {
  int status = -1;
  std::string stdout_text;
  std::string stderr_text;
};

/// Runs a shell command line, capturing its output in a directory of its own so that it never
/// shows up in the directories under test.
inline Outcome run_shell(const std::string& command_line) {
  const TempDirectory capture;
  const std::string out = capture / "stdout.txt";
  const std::string err = capture / "stderr.txt";
  const std::string command = command_line + " >" + quoted(out) + " 2>" + quoted(err);
  const int raw = std::system(command.c_str());
  REQUIRE(raw != -1);
  REQUIRE_MESSAGE(WIFEXITED(raw), "dynamix did not exit normally: " << command);
  return {WEXITSTATUS(raw), contents(out), contents(err)};
}

/// Runs the dynamix binary with `arguments` (already shell-quoted where needed).
inline Outcome dynamix(const std::string& arguments) {
  return run_shell(quoted(DYNAMIX_BINARY) + " " + arguments);
}

/// Whether Open MPI's launcher is on PATH (Debian: openmpi-bin).
inline bool have_mpirun() { return std::system("command -v mpirun >/dev/null 2>&1") == 0; }

/// `mpirun -n 2 dynamix ARGUMENTS` on this host; CI runs as root, which Open MPI wants to be told.
inline Outcome dynamix_over_mpi(const std::string& arguments) {
  return run_shell("mpirun --allow-run-as-root --oversubscribe -n 2 " + quoted(DYNAMIX_BINARY) +
                   " " + arguments);
}

inline std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, separator)) fields.push_back(field);
  if (!line.empty() && line.back() == separator) fields.emplace_back();
  return fields;
}

struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  std::size_t column(const std::string& name) const {
    const auto at = std::find(header.begin(), header.end(), name);
    REQUIRE_MESSAGE(at != header.end(), "no column " << name);
    return static_cast<std::size_t>(at - header.begin());
  }
};

inline Csv read_csv(const fs::path& file) {
  std::istringstream in(contents(file));
  Csv csv;
  std::string line;
  REQUIRE(std::getline(in, line));
  csv.header = split(line, ',');
  while (std::getline(in, line)) {
    csv.rows.push_back(split(line, ','));
    REQUIRE(csv.rows.back().size() == csv.header.size());
  }
  return csv;
}

}  // namespace dynamix::testing
