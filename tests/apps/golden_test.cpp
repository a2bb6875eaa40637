// Golden outputs: `dynamix simulate` on every shipped scenario, under a baseline policy and with
// the per-iteration record, `dynamix workloads`, and the statistics of a short seeded training
// run, compared with the files under tests/apps/golden/: text exactly, numbers within a tight
// relative tolerance. After a change meant to alter these outputs:
//   DYNAMIX_UPDATE_GOLDEN=1 meson test -C build golden
// rewrites the files (review the diff, commit it).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>

#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using namespace testing;

const fs::path kGoldenDir = kSourceDir / "tests" / "apps" / "golden";

/// The simulator's arithmetic is the same on every x86-64 CPU; only libm may differ in the last
/// bits. So is training's, whose kernels dynamix pins (apps/portable_kernels.h): policy_hash
/// checks its bytes.
constexpr double kSimulatorTolerance = 1e-9;

/// One command and the files of its run directory (or "stdout.txt", its output) kept as golden.
struct GoldenCase {
  std::string name;
  std::string command;  // ends with " --out " where the command writes a run directory
  std::vector<std::string> files;
  double tolerance = kSimulatorTolerance;
  std::vector<std::string> ignored_columns = {};  // of the CSV files: what varies run to run
};

std::vector<GoldenCase> golden_cases() {
  std::vector<GoldenCase> cases;
  std::set<fs::path> scenarios;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "scenarios")) {
    if (entry.path().extension() == ".yaml") scenarios.insert(entry.path());
  }
  cases.reserve(scenarios.size() + 4);
  for (const fs::path& scenario : scenarios) {
    cases.push_back({"simulate-" + scenario.stem().string(),
                     "simulate --scenario " + quoted(scenario.string()) + " --iterations 20 --out ",
                     {"summary.json", "windows.csv", "validation.csv"}});
  }
  cases.push_back({"simulate-policy-goodput",
                   "simulate --policy goodput --iterations 60 --record none --out ",
                   {"summary.json", "decisions.csv", "validation.csv"}});
  cases.push_back({"simulate-record-iterations",
                   "simulate --scenario hetero32 --batch-size 96 --iterations 3 --record "
                   "iterations --out ",
                   {"iterations.csv"}});
  cases.push_back({"workloads", "workloads", {"stdout.txt"}});
  // Eight PPO updates on quickstart: returns, episode lengths and the evaluation are the
  // policy's decisions; explained variance, entropy, KL and clip fraction its learning.
  cases.push_back({"train-quickstart",
                   "train --steps 4096 --envs 8 --rollout-steps 64 --eval-every 8 --eval-seeds 1 "
                   "--checkpoint-every 1000 --seed 1 --quiet --out ",
                   {"train_curve.csv"},
                   kSimulatorTolerance,
                   {"wall_s"}});
  return cases;
}

std::vector<std::string> lines_of(const std::string& text) { return split(text, '\n'); }

/// A line cut into fields and the separators between them, each separator a token of its own.
std::vector<std::string> tokens_of(const std::string& line) {
  std::vector<std::string> tokens;
  std::string field;
  for (const char c : line) {
    if (std::string_view(" ,:[]{}\"\t").find(c) == std::string_view::npos) {
      field += c;
      continue;
    }
    if (!field.empty()) tokens.push_back(field);
    tokens.emplace_back(1, c);
    field.clear();
  }
  if (!field.empty()) tokens.push_back(field);
  return tokens;
}

std::optional<double> number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

/// Equal text, or two numbers within `tolerance` of each other relative to the larger.
bool same_field(const std::string& actual, const std::string& expected, double tolerance) {
  if (actual == expected) return true;
  const std::optional<double> a = number(actual);
  const std::optional<double> e = number(expected);
  if (!a || !e) return false;
  return std::abs(*a - *e) <= tolerance * std::max({std::abs(*a), std::abs(*e), 1e-6});
}

/// Compares `actual` with the golden `expected` line by line, CHECKing each line that differs
/// (the first few), naming the file, the line and the field.
void compare(const std::string& file, const std::string& actual, const std::string& expected,
             const GoldenCase& golden) {
  const std::vector<std::string> got = lines_of(actual);
  const std::vector<std::string> want = lines_of(expected);
  REQUIRE_MESSAGE(got.size() == want.size(),
                  file << ": " << got.size() << " lines, golden has " << want.size());
  const bool csv = file.ends_with(".csv");
  std::set<std::size_t> ignored;
  if (csv && !want.empty()) {
    const std::vector<std::string> header = split(want[0], ',');
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (std::count(golden.ignored_columns.begin(), golden.ignored_columns.end(), header[i]))
        ignored.insert(i);
    }
  }
  int differences = 0;
  for (std::size_t n = 0; n < want.size() && differences < 5; ++n) {
    // The version changes with every release and says nothing about the outputs.
    if (want[n].find("\"dynamix_version\"") != std::string::npos) continue;
    const std::vector<std::string> a = csv ? split(got[n], ',') : tokens_of(got[n]);
    const std::vector<std::string> e = csv ? split(want[n], ',') : tokens_of(want[n]);
    bool same = a.size() == e.size();
    for (std::size_t i = 0; same && i < e.size(); ++i) {
      same = ignored.count(i) > 0 || same_field(a[i], e[i], golden.tolerance);
    }
    CHECK_MESSAGE(same,
                  file << ":" << n + 1 << ": found\n  " << got[n] << "\ngolden\n  " << want[n]);
    differences += same ? 0 : 1;
  }
}

/// The case's outputs: each golden file's name and its text.
std::vector<std::pair<std::string, std::string>> run_case(const GoldenCase& golden,
                                                          const TempDirectory& work) {
  const bool writes_directory = golden.command.ends_with("--out ");
  const Outcome run =
      dynamix(golden.command + (writes_directory ? quoted(work / "run") : std::string()));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const std::string& file : golden.files) {
    outputs.emplace_back(
        file, file == "stdout.txt" ? run.stdout_text : contents(work.path() / "run" / file));
  }
  return outputs;
}

TEST_SUITE("golden") {
  TEST_CASE("dynamix's outputs match the golden files under tests/apps/golden" *
            doctest::timeout(300)) {
    const bool update = std::getenv("DYNAMIX_UPDATE_GOLDEN") != nullptr;
    const std::vector<GoldenCase> cases = golden_cases();
    for (const GoldenCase& golden : cases) {
      CAPTURE(golden.command);
      const TempDirectory work;
      for (const auto& [file, text] : run_case(golden, work)) {
        const fs::path stored = kGoldenDir / golden.name / file;
        if (update) {
          fs::create_directories(stored.parent_path());
          std::ofstream(stored, std::ios::binary) << text;
          continue;
        }
        REQUIRE_MESSAGE(fs::exists(stored), stored.string() << " missing: regenerate with "
                                                               "DYNAMIX_UPDATE_GOLDEN=1 meson "
                                                               "test -C build golden");
        compare(golden.name + "/" + file, text, contents(stored), golden);
      }
    }
    // No golden folder outlives its case (a scenario removed or renamed).
    for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
      if (!entry.is_directory()) continue;
      const std::string name = entry.path().filename().string();
      CHECK_MESSAGE(std::any_of(cases.begin(), cases.end(),
                                [&](const GoldenCase& golden) { return golden.name == name; }),
                    entry.path().string() << " belongs to no golden case");
    }
  }
}

}  // namespace
}  // namespace dynamix
