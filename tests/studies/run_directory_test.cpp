// RunDirectory and CsvWriter: a run directory appears complete or not at all; tidy CSV rows.
#include "studies/run_directory.h"

#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sim/core/check.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::TempDirectory;

namespace fs = std::filesystem;

std::string contents(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t entries(const fs::path& directory) {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(directory)) ++count;
  return count;
}

void commit_run(const fs::path& final_path, const std::string& file, const std::string& text) {
  RunDirectory directory(final_path, "test");
  std::ofstream(directory.file(file)) << text;
  directory.commit();
}

/// Changes the working directory for the lifetime of the object.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const fs::path& path) : previous_(fs::current_path()) {
    fs::current_path(path);
  }
  ~WorkingDirectory() { fs::current_path(previous_); }

 private:
  fs::path previous_;
};

TEST_CASE("a run directory that is never committed leaves nothing behind") {
  TempDirectory temp;
  {
    RunDirectory directory(temp.path() / "run", "test");
    CsvWriter csv(directory.file("a.csv"), {"x"});
    csv << 1;
    csv.end_row();
    csv.close();
    CHECK(fs::exists(directory.file("a.csv")));
    CHECK_FALSE(fs::exists(temp.path() / "run"));
  }
  CHECK(entries(temp.path()) == 0);
}

TEST_CASE("a committed run directory carries a marker naming the command that wrote it") {
  TempDirectory temp;
  commit_run(temp.path() / "run", "summary.json", "{}");
  CHECK(RunDirectory::is_run_directory(temp.path() / "run"));
  CHECK(contents(temp.path() / "run" / std::string(RunDirectory::kMarker)).ends_with(" test\n"));
}

TEST_CASE("committing a run directory replaces an older run that dynamix wrote") {
  TempDirectory temp;
  const fs::path final_path = temp.path() / "run";
  commit_run(final_path, "stale.csv", "old");
  commit_run(final_path, "summary.json", "{}");
  CHECK(contents(final_path / "summary.json") == "{}");
  CHECK_FALSE(fs::exists(final_path / "stale.csv"));
  CHECK(entries(temp.path()) == 1);
}

TEST_CASE("a folder dynamix did not write is refused before anything is written, and kept") {
  TempDirectory temp;
  const fs::path mine = temp.path() / "mine";
  fs::create_directories(mine);
  std::ofstream(mine / "thesis.tex") << "precious";
  const std::string message = testing::error_of([&] { RunDirectory directory(mine, "test"); });
  CHECK(message.find("--out") == 0);
  CHECK(message.find("was not written by dynamix") != std::string::npos);
  CHECK(contents(mine / "thesis.tex") == "precious");
  CHECK(entries(temp.path()) == 1);
}

TEST_CASE("an existing file and a staging name in use are refused; an empty folder is taken") {
  TempDirectory temp;
  const std::string file = temp.write("notes.txt", "mine");
  CHECK(testing::error_of([&] { RunDirectory directory(file, "test"); }) != "no error");
  CHECK(contents(file) == "mine");
  fs::create_directories(temp.path() / "empty");
  commit_run(temp.path() / "empty", "summary.json", "{}");
  CHECK(RunDirectory::is_run_directory(temp.path() / "empty"));
  fs::create_directories(temp.path() / "train.partial");
  std::ofstream(temp.path() / "train.partial" / "data.bin") << "mine";
  CHECK(testing::error_of([&] {
          RunDirectory directory(temp.path() / "train", "test", RunDirectory::kResumable);
        }) != "no error");
  CHECK(contents(temp.path() / "train.partial" / "data.bin") == "mine");
}

TEST_CASE("the working directory, its parents and the root are refused, even as run directories") {
  TempDirectory temp;
  commit_run(temp.path() / "run", "summary.json", "{}");
  fs::create_directories(temp.path() / "run" / "inside");
  const WorkingDirectory inside(temp.path() / "run" / "inside");
  for (const std::string out : {".", "..", "./", "../../run", "/"}) {
    CAPTURE(out);
    CHECK(testing::error_of([&] { RunDirectory directory(out, "test"); }).find("working") !=
          std::string::npos);
  }
  CHECK(fs::exists(temp.path() / "run" / "summary.json"));
}

TEST_CASE("resuming needs the staging folder an interrupted run left, and creates none") {
  TempDirectory temp;
  const fs::path final_path = temp.path() / "train";
  CHECK(testing::error_of([&] {
          RunDirectory directory(final_path, "train", RunDirectory::kResume);
        }).find("--resume") == 0);
  CHECK(entries(temp.path()) == 0);
  {
    RunDirectory directory(final_path, "train", RunDirectory::kResumable);
    std::ofstream(directory.file("checkpoint.pt")) << "state";
  }
  RunDirectory resumed(final_path, "train", RunDirectory::kResume);
  CHECK(contents(resumed.file("checkpoint.pt")) == "state");
}

TEST_CASE("a resumable staging folder with nothing in it is not left behind") {
  TempDirectory temp;
  { RunDirectory directory(temp.path() / "train", "train", RunDirectory::kResumable); }
  CHECK(entries(temp.path()) == 0);
}

TEST_CASE("staging folders of dynamix processes that died are cleared; others are kept") {
  TempDirectory temp;
  const fs::path dead = temp.path() / "run.partial-999999999";
  fs::create_directories(dead);
  std::ofstream(dead / std::string(RunDirectory::kMarker)) << "dynamix test\n";
  const fs::path foreign = temp.path() / "run.partial-999999998";
  fs::create_directories(foreign);
  { RunDirectory directory(temp.path() / "run", "test"); }
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(foreign));
}

TEST_CASE("an append directory is kept in place, reopened by its command and refused to others") {
  TempDirectory temp;
  const fs::path log = temp.path() / "log";
  const auto open = [](const fs::path& path, std::string_view command) {
    RunDirectory directory(path, command, RunDirectory::kAppend, "--log");
    std::ofstream(directory.file("decisions.jsonl"), std::ios::app) << command << '\n';
  };
  open(log, "serve");
  open(log, "serve");
  CHECK(contents(log / "decisions.jsonl") == "serve\nserve\n");
  CHECK(contents(log / std::string(RunDirectory::kMarker)).ends_with(" serve\n"));
  const std::string refused =
      "--log: expected a new directory or one that dynamix replay wrote, found '";
  CHECK(testing::error_of([&] { open(log, "replay"); }) ==
        refused + log.string() + "', which another dynamix command wrote");
  const fs::path mine = temp.path() / "mine";
  fs::create_directories(mine);
  std::ofstream(mine / "thesis.tex") << "precious";
  CHECK(testing::error_of([&] { open(mine, "replay"); }) ==
        refused + mine.string() + "', which exists and was not written by dynamix");
  const std::string file = temp.write("notes.txt", "mine");
  CHECK(testing::error_of([&] { open(file, "replay"); }) ==
        refused + file + "', which is not a directory");
  CHECK(entries(mine) == 1);
  CHECK(contents(file) == "mine");
  fs::create_directories(temp.path() / "empty");
  open(temp.path() / "empty", "replay");
  CHECK(RunDirectory::is_run_directory(temp.path() / "empty"));
}

TEST_CASE("an output file may be new or one dynamix wrote, never a folder or a foreign file") {
  TempDirectory temp;
  const auto never_ours = [](const fs::path&) { return false; };
  const auto always_ours = [](const fs::path&) { return true; };
  CHECK(testing::error_of([&] {
          check_output_file(temp.path() / "policy.pt", "--out", never_ours);
        }) == "no error");
  const std::string file = temp.write("policy.pt", "x");
  CHECK(testing::error_of([&] { check_output_file(file, "--out", never_ours); }) != "no error");
  CHECK(testing::error_of([&] { check_output_file(file, "--out", always_ours); }) == "no error");
  CHECK(testing::error_of([&] {
          check_output_file(temp.path(), "--out", always_ours);
        }).find("a directory") != std::string::npos);
}

TEST_CASE("a CSV file has a header and rows of the same width, quoting only where needed") {
  TempDirectory temp;
  const fs::path file = temp.path() / "t.csv";
  CsvWriter csv(file, {"name", "count", "time_s"});
  csv << std::string_view("plain") << 3 << 0.25;
  csv.end_row();
  csv << std::string_view("a,b \"c\"") << std::int64_t{-1} << 1e-9;
  csv.end_row();
  csv.close();
  const std::string text = contents(file);
  CHECK(text.starts_with("name,count,time_s\nplain,3,0.25\n\"a,b \"\"c\"\"\",-1,"));
  CHECK(text.ends_with("\n"));
}

TEST_CASE("a CSV kept in memory holds what a file would, however long") {
  TempDirectory temp;
  CsvWriter file(temp.path() / "t.csv", {"name", "time_s"});
  CsvWriter memory({"name", "time_s"});
  for (int row = 0; row < 5000; ++row) {
    for (CsvWriter* csv : {&file, &memory}) {
      *csv << std::string_view("row \"" + std::to_string(row) + "\", long enough") << row * 0.5;
      csv->end_row();
    }
  }
  file.close();
  CHECK(memory.text().size() > (1 << 16));
  CHECK(memory.text() == contents(temp.path() / "t.csv"));
}

TEST_CASE("a CSV row with the wrong number of fields is an internal error") {
  TempDirectory temp;
  CsvWriter csv(temp.path() / "t.csv", {"a", "b"});
  csv << 1;
  CHECK_THROWS_AS(csv.end_row(), InvariantError);
}

}  // namespace
}  // namespace dynamix
