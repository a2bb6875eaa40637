// The deterministic fuzz run of CI: every seed in tests/fuzz/corpus/<target>/ and a fixed set
// of mutants of each must be accepted or refused with an InputError.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "dynamix_config.h"
#include "tests/fuzz/fuzz_targets.h"
#include "tests/fuzz/known_failures.h"
#include "tests/fuzz/mutator.h"
#include "tests/fuzz/supervisor.h"

// Single allocations above 2 GiB are failures (a loader trusting a size from its input).
// NOLINTNEXTLINE(bugprone-reserved-identifier,readability-identifier-naming): ASan's hook
extern "C" const char* __asan_default_options() {
  return "max_allocation_size_mb=2048:allocator_may_return_null=0:detect_leaks=0";
}
// Undefined behaviour reports carry their stack, for the failure message.
// NOLINTNEXTLINE(bugprone-reserved-identifier,readability-identifier-naming): UBSan's hook
extern "C" const char* __ubsan_default_options() { return "print_stacktrace=1"; }

namespace dynamix::fuzz {
namespace {

/// Mutants per target; DYNAMIX_FUZZ_MUTANTS overrides it for a longer local run.
constexpr std::size_t kMutantsPerTarget = 4000;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t mutants_per_target() {
  if (const char* value = std::getenv("DYNAMIX_FUZZ_MUTANTS")) {
    return static_cast<std::size_t>(std::strtoull(value, nullptr, 10));
  }
  return kMutantsPerTarget;
}

/// FNV-1a, to derive each target's mutation seed from its name.
std::uint64_t hash_name(std::string_view name) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return hash;
}

void check_target(std::string_view name) {
  const NamedTarget* target = find_target(name);
  REQUIRE(target != nullptr);
  const std::filesystem::path folder =
      std::filesystem::path(DYNAMIX_SOURCE_DIR) / "tests/fuzz/corpus" / std::string(name);
  std::vector<std::filesystem::path> seed_paths;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.is_regular_file()) seed_paths.push_back(entry.path());
  }
  std::sort(seed_paths.begin(), seed_paths.end());
  REQUIRE_MESSAGE(!seed_paths.empty(), "no seeds in " << folder.string());

  // The seeds, then mutants of the seeds that are not known to fail.
  std::vector<std::string> inputs;
  std::vector<std::string> labels;
  std::vector<std::string> mutable_seeds;
  for (const auto& path : seed_paths) {
    inputs.push_back(read_file(path));
    labels.push_back(path.filename().string());
    if (!known_failure(name, labels.back(), {})) mutable_seeds.push_back(inputs.back());
  }
  REQUIRE(!mutable_seeds.empty());
  MutationRng rng(hash_name(name));
  const std::size_t mutants = mutants_per_target();
  for (std::size_t i = 0; i < mutants; ++i) {
    inputs.push_back(mutate(mutable_seeds[i % mutable_seeds.size()], mutable_seeds, rng));
    labels.push_back("mutant " + std::to_string(i) + " of " +
                     seed_paths[0].parent_path().filename().string());
  }

  const auto started = std::chrono::steady_clock::now();
  const std::vector<Failure> failures = run_supervised(target->run, inputs);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  const std::filesystem::path failure_folder = DYNAMIX_FUZZ_FAILURE_DIR;
  std::size_t known = 0;
  std::vector<bool> failed(inputs.size(), false);
  for (const Failure& failure : failures) {
    failed[failure.index] = true;
    const std::string& label = labels[failure.index];
    if (const KnownFailure* why = known_failure(name, label, failure.message)) {
      if (known++ == 0) {
        std::cout << "fuzz " << name << ": known failure (" << why->why << "), first on " << label
                  << ": " << failure.message.substr(0, 200) << '\n';
      }
      continue;
    }
    std::filesystem::create_directories(failure_folder);
    const std::filesystem::path saved =
        failure_folder / (std::string(name) + "-" + std::to_string(failure.index) + ".input");
    std::ofstream(saved, std::ios::binary) << inputs[failure.index];
    std::ofstream(saved.string() + ".log") << failure.message << '\n';
    std::ostringstream report;
    report << name << ": " << label << " broke the contract: " << failure.message
           << "\n  input saved to " << saved.string() << " (replay: fuzz_replay " << name << " "
           << saved.string() << ")";
    FAIL_CHECK(report.str());
  }
  for (std::size_t i = 0; i < seed_paths.size(); ++i) {
    if (!failed[i] && known_failure(name, labels[i], {})) {
      const std::string note = std::string(name) + ": seed " + labels[i] +
                               " is listed as known-failing but now passes: remove it from "
                               "kKnownFailures";
      MESSAGE(note);
    }
  }
  std::cout << "fuzz " << name << ": " << inputs.size() << " inputs (" << seed_paths.size()
            << " seeds, " << mutants << " mutants) in " << seconds << " s, "
            << inputs.size() - failures.size() << " clean, " << known << " known failures, "
            << failures.size() - known << " new failures\n";
}

TEST_CASE("Mutated scenario files are accepted or refused with an InputError") {
  check_target("scenario");
}

TEST_CASE("Mutated topology files are accepted or refused with an InputError") {
  check_target("topology");
}

TEST_CASE("Mutated bandwidth traces are accepted or refused with an InputError") {
  check_target("trace");
}

TEST_CASE("Mutated batch options are accepted or refused with an InputError") {
  check_target("batch_plan");
}

TEST_CASE("Mutated --set overrides are accepted or refused with an InputError") {
  check_target("overrides");
}

TEST_CASE(
    "Mutated measurement files are accepted within the schema or refused with an InputError") {
  check_target("measurements");
}

TEST_CASE("Mutated policy metadata is accepted or refused with an InputError") {
  check_target("policy_metadata");
}

#ifdef DYNAMIX_PROTOCOL
TEST_CASE("Mutated window reports are refused, or decided within every bound") {
  check_target("report");
}
#endif

}  // namespace
}  // namespace dynamix::fuzz
