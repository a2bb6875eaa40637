// End to end: `dynamix calibrate --measured` fits and writes a scenario that `dynamix fidelity`
// reads back; bad measurement files exit 2 with one line and nothing written; a short live
// measurement runs when Debian's python3 has torch.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "dynamix_config.h"
#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using namespace testing;
namespace fs = std::filesystem;

const std::string kMeasured =
    (kSourceDir / "calibration/measurements/loopback_2core_epyc.csv").string();

TEST_CASE("calibrate --measured writes a calibrated scenario that fidelity reproduces") {
  TempDirectory work;
  const Outcome fit =
      dynamix("calibrate --measured " + quoted(kMeasured) + " --out " + quoted(work / "fit"));
  REQUIRE_MESSAGE(fit.status == 0, fit.stderr_text);
  for (const char* file : {"calibrated.yaml", "fit.csv", "measurements.csv"})
    CHECK(fs::exists(work.path() / "fit" / file));
  CHECK(contents(work.path() / "fit" / "measurements.csv") == contents(kMeasured));
  CHECK(fit.stdout_text.find("held-out allreduce") != std::string::npos);
  CHECK(fit.stdout_text.find("held-out iteration") != std::string::npos);
  const std::string yaml = contents(work.path() / "fit" / "calibrated.yaml");
  CHECK(yaml.find("# Fitted: ") != std::string::npos);

  const Outcome check = dynamix("fidelity --scenario " + quoted(work / "fit/calibrated.yaml") +
                                " --measured " + quoted(kMeasured));
  REQUIRE_MESSAGE(check.status == 0, check.stderr_text);
  // The calibrated scenario alone gives the same comparison as the fit: same table.
  const auto table = [](const std::string& text) { return text.substr(0, text.find("\n\n")); };
  CHECK(table(check.stdout_text) ==
        table(fit.stdout_text.substr(fit.stdout_text.find("\n\n") + 2)));
  CHECK(check.stdout_text.find("all iteration") != std::string::npos);
}

TEST_CASE("bad measurement files exit 2 with one line naming file and column, writing nothing") {
  TempDirectory work;
  const std::string header = "kind,ranks,message_bytes,batch_per_rank,total_s\n";
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"kind,ranks,total_s\nallreduce,2,0.01\n",
       "bad.csv:2: header: expected a column named "
       "'message_bytes'"},
      {"kind,ranks,message_bytes,total_s\nallreduce,2,65536,nan\n",
       "bad.csv:2: total_s: expected a finite number > 0, found 'nan'"},
      {"kind,ranks,message_bytes,total_s\ngather,2,65536,0.01\n",
       "bad.csv:2: kind: expected allreduce, iteration or compute, found 'gather'"},
  };
  for (const auto& bad : cases) {
    CAPTURE(bad.text);
    const std::string file = work.write("bad.csv", bad.text);
    for (const std::string& command :
         std::vector<std::string>{"calibrate --out " + quoted(work / "out"), "fidelity"}) {
      const Outcome outcome = dynamix(command + " --measured " + quoted(file));
      CHECK(outcome.status == 2);
      CHECK(outcome.stdout_text.empty());
      CHECK(outcome.stderr_text.find(bad.expected) != std::string::npos);
      CHECK(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n') == 1);
      CHECK(!fs::exists(work.path() / "out"));
    }
  }
  const Outcome knob = dynamix("calibrate --measured " + quoted(kMeasured) +
                               " --fit sync.message_overhead_us=5:1 --out " + quoted(work / "out"));
  CHECK(knob.status == 2);
  CHECK(knob.stderr_text.find("--fit") != std::string::npos);
  CHECK(!fs::exists(work.path() / "out"));
}

TEST_CASE("fidelity reads a dynamix serve log: each answered window is a configuration") {
  TempDirectory work;
  const std::string worker = R"({"batch_size":32,"compute_s":0.003,"comm_s":0.001})";
  const std::string log = work.write(
      "decisions.jsonl", R"({"report":{"job_id":"cnn","metrics":{"iteration_s":0.005,"workers":[)" +
                             worker + "," + worker + R"(]}},"decision":{}})" + "\n");
  const Outcome outcome = dynamix("fidelity --measured " + quoted(log));
  REQUIRE_MESSAGE(outcome.status == 0, outcome.stderr_text);
  CHECK(outcome.stdout_text.find("iteration p=2 b=32") != std::string::npos);
  CHECK(outcome.stdout_text.find("all iteration (1 configurations)") != std::string::npos);
}

TEST_CASE("calibrate passes --measure-options to the script as words, never to a shell") {
  TempDirectory work;
  const fs::path marker = work.path() / "created-by-a-shell";
  const Outcome run =
      dynamix("calibrate --python /bin/echo --measure-options " +
              quoted("--quick; touch " + marker.string() + " $(touch " + marker.string() + ")") +
              " --out " + quoted(work / "live"));
  CHECK(run.status != 0);  // echo measured nothing
  CHECK_FALSE(fs::exists(marker));
}

TEST_CASE("calibrate measures this machine with the embedded script (short run)") {
  if (std::system(DYNAMIX_PYTHON " -c 'import torch.distributed' >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: " DYNAMIX_PYTHON " has no torch");
    return;
  }
  TempDirectory work;
  const Outcome run =
      dynamix("calibrate --measure-options --quick --fit-ranks 2 --out " + quoted(work / "live"));
  REQUIRE_MESSAGE(run.status == 0, run.stderr_text);
  const std::string csv = contents(work.path() / "live" / "measurements.csv");
  CHECK(csv.find("# cpu: ") != std::string::npos);
  CHECK(csv.find("allreduce,2,65536,") != std::string::npos);
  CHECK(csv.find("iteration,2,,16,") != std::string::npos);
  CHECK(fs::exists(work.path() / "live" / "calibrated.yaml"));
}

}  // namespace
}  // namespace dynamix
