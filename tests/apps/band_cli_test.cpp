// End to end: `dynamix band` refuses bad input with status 2, and a check fails (status 1) on a
// run that did not learn or lost an input; the passing check is in train_cli_test.
#include <doctest/doctest.h>

#include <fstream>

#include "tests/apps/run_dynamix.h"

namespace dynamix {
namespace {

using namespace testing;

/// A band by hand: short training, bins nothing can leave, and the given guards.
std::string band_file(const TempDirectory& work, const std::string& train_options,
                      const std::string& guards) {
  return work.write(
      "band.yaml",
      "# dynamix reward band: written by dynamix band make\n"
      "train_options: \"" +
          train_options +
          "\"\nseeds: [1]\nbin_updates: 1\nmargin: 0.05\nguard: 0.5\neval_seeds: 1\n" + guards +
          "bins:\n  - {first_update: 1, last_update: 1, low: -100, high: 100}\n");
}

TEST_CASE("band check fails a run whose policy departs as rarely as an untrained one") {
  TempDirectory work;
  const std::string band =
      band_file(work, "--steps 1024 --envs 8 --learning-rate 1e-9 --set training.budget_epochs=1",
                "min_departure_share: 0.1\n");
  const Outcome run = dynamix("band check --band " + quoted(band));
  CAPTURE(run.stderr_text);
  CHECK(run.status == 1);
  CHECK(run.stdout_text.find("no learning: departure share 0 < 0.05") != std::string::npos);
  CHECK(run.stdout_text.find("band check (seed 1): failed") != std::string::npos);
}

TEST_CASE("band check fails a run in which a feature the band saw vary stayed constant") {
  TempDirectory work;
  // One fixed cluster: its worker count never varies, which a band made on a family saw vary.
  const std::string band = band_file(work, "--steps 1024 --envs 8 --set training.budget_epochs=1",
                                     "min_departure_share: 0\nvaried_features: [workers]\n");
  const Outcome run = dynamix("band check --band " + quoted(band));
  CAPTURE(run.stderr_text);
  CHECK(run.status == 1);
  CHECK(run.stdout_text.find("lost input: observation feature workers never varied") !=
        std::string::npos);
}

TEST_CASE("band check refuses a band made on a scenario that has changed since") {
  TempDirectory work;
  std::string text = contents(kSourceDir / "tests" / "apps" / "reward_band.yaml");
  // The repository's band records the quick-start scenario as it is now.
  CHECK(text.find("scenario_fingerprint: \"") != std::string::npos);
  const std::size_t start = text.find("scenario_fingerprint: \"") + 23;
  text.replace(start, 16, "0123456789abcdef");
  const std::string band = work.write("band.yaml", text);
  const Outcome run = dynamix("band check --band " + quoted(band));
  CHECK(run.status == 2);
  CHECK(run.stderr_text.find("band.yaml: scenario_fingerprint: expected the scenario the band was "
                             "made on (0123456789abcdef), found ") != std::string::npos);
  CHECK(run.stderr_text.find("the scenario has changed since; make the band again\n") !=
        std::string::npos);
}

TEST_CASE("band refuses bad input with one line and status 2, and writes nothing") {
  TempDirectory work;
  const std::string other = work.write("notes.yaml", "mine: true\n");
  for (const std::string& arguments :
       {std::string("band"), std::string("band build"), "band check --band " + quoted(other),
        "band check --band " + quoted(work / "missing.yaml"),
        "band make --train-options '--steps 64 --out x' --out " + quoted(work / "b.yaml"),
        "band make --train-options '--steps 64' --seeds 0 --out " + quoted(work / "b.yaml"),
        "band make --train-options '--steps 64' --margin -1 --out " + quoted(work / "b.yaml"),
        "band make --train-options '--steps 64' --out " + quoted(other)}) {
    CAPTURE(arguments);
    const Outcome outcome = dynamix(arguments);
    CAPTURE(outcome.stderr_text);
    CHECK(outcome.status == 2);
    CHECK(std::count(outcome.stderr_text.begin(), outcome.stderr_text.end(), '\n') == 1);
  }
  CHECK(contents(other) == "mine: true\n");
  CHECK_FALSE(fs::exists(work.path() / "b.yaml"));
}

TEST_CASE("band check's guards come from the band file, which must be a band") {
  TempDirectory work;
  const std::string band = band_file(work, "--steps 64", "min_departure_share: 0\nsurprise: 1\n");
  const Outcome outcome = dynamix("band check --band " + quoted(band));
  CHECK(outcome.status == 2);
  CHECK(outcome.stderr_text.find("surprise") != std::string::npos);
}

}  // namespace
}  // namespace dynamix
