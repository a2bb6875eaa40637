// Reading runs CSVs: provenance, interleaved runs, every malformed line an InputError naming the
// file and line; the B_simple estimator's halves.
#include "sim/calibration/training_runs.h"

#include <doctest/doctest.h>

#include <string>

#include "tests/fixtures.h"

namespace dynamix {
namespace {

const std::string kHeader = std::string(kRunsHeader) + "\n";

/// A window row: run, window, iteration, samples, then the rest as given.
std::string row(const std::string& run, int window, int iteration, int samples,
                const std::string& rest = "1.5,256,64,4,2.0,0.5,2,1.5") {
  return run + "," + std::to_string(window) + "," + std::to_string(iteration) + "," +
         std::to_string(samples) + "," + rest + "\n";
}

TEST_CASE("A runs CSV is read with its provenance, runs interleaved, windows in order") {
  const testing::TempDirectory dir;
  const std::string path = dir.write(
      "runs.csv", "# reference job, 4 gloo ranks\n" + kHeader + row("a", 0, 10, 2560) +
                      row("b", 0, 5, 640, "0.5,128,32,2,2.1,,3,2") + row("a", 1, 20, 5120) +
                      row("b", 1, 10, 1280, "1.0,128,32,2,2.0,0.4,3,2"));
  const RunsFile file = read_runs(path);
  CHECK(file.provenance == std::vector<std::string>{"reference job, 4 gloo ranks"});
  REQUIRE(file.runs.size() == 2);
  CHECK(file.runs[0].label == "a");
  CHECK(file.runs[0].windows.size() == 2);
  CHECK(file.runs[0].windows[1].line == 5);
  CHECK(file.runs[1].windows[0].global_batch == 128);
  CHECK_FALSE(file.runs[1].windows[0].validation_accuracy.has_value());
  CHECK(*file.runs[0].windows[0].validation_accuracy == 0.5);
}

TEST_CASE(
    "A malformed runs CSV is an input error naming the file, the line and what was expected") {
  const testing::TempDirectory dir;
  const struct {
    std::string text;
    std::string expected;
  } cases[] = {
      {"run,window,iteration\n" + row("a", 0, 10, 2560),
       ":1: header: expected the header " + std::string(kRunsHeader) + ", found "},
      {kHeader + row("a", 0, 10, 2560, "1.5,256,64,4,high,0.5,2,1.5"),
       ":2: train_loss: expected a finite number > 0, found 'high'"},
      {kHeader + row("a", 0, 10, 2560) + row("a", 1, 20, 2000),
       ":3: samples: expected a count above the previous window's (line 2), found '2000'"},
      {kHeader + row("a", 0, 10, 2560) + row("a", 1, 10, 5120),
       ":3: iteration: expected a count above the previous window's (line 2), found '10'"},
      {kHeader + row("a", 0, 10, 2560) + row("a", 2, 20, 5120),
       ":3: window: expected window 1 of run 'a', found '2'"},
      {kHeader + row("a", 0, 10, 2560) + row("b", 0, 10, 2560, "1.5,256,64,4,2.0,,2,1.5"),
       ":3: validation_accuracy: expected at least one validation accuracy in run 'b', found none"},
      {kHeader + row("a", 0, 10, 2560, "1.5,256,512,4,2.0,0.5,2,1.5"),
       ":2: local_batch: expected rank 0's batch <= global_batch (256), found '512'"},
      {kHeader + row("a", 0, 10, 2560, "1.5,256,64,4,2.0,1.5,2,1.5"),
       ":2: validation_accuracy: expected an accuracy in [0, 1] or an empty cell, found '1.5'"},
      {kHeader + row("a", 0, 10, 2560, "1.5,256,64,4,2.0,0.5,2"),
       ":2: row: expected 12 comma-separated cells, found 11"},
      {kHeader, ":1: expected a header and at least one window row, found no rows"},
  };
  for (const auto& bad : cases) {
    CAPTURE(bad.text);
    const std::string path = dir.write("runs.csv", bad.text);
    const std::string message = testing::error_of([&] { read_runs(path); });
    CAPTURE(message);
    CHECK(message.starts_with(path + bad.expected));
  }
}

TEST_CASE("B_simple's halves recover |G|² and tr(Σ) from the local and global norms") {
  // |g_b|² = |G|² + tr(Σ)/b: with |G|² = 2 and tr(Σ) = 300, b = 30, B = 120.
  RunWindow window;
  window.local_batch = 30;
  window.global_batch = 120;
  window.local_norm_sq = 2 + 300.0 / 30;
  window.global_norm_sq = 2 + 300.0 / 120;
  const auto parts = noise_scale_parts(window);
  REQUIRE(parts.has_value());
  CHECK(parts->gradient_sq == doctest::Approx(2));
  CHECK(parts->trace_covariance == doctest::Approx(300));
  const std::vector<NoiseScaleParts> pooled{*parts, {.gradient_sq = -1, .trace_covariance = 100}};
  CHECK(*pooled_noise_scale(pooled) == doctest::Approx(400.0));
  CHECK_FALSE(pooled_noise_scale(std::vector<NoiseScaleParts>{{-1, 100}}).has_value());
  window.global_batch = 30;
  CHECK_FALSE(noise_scale_parts(window).has_value());
}

}  // namespace
}  // namespace dynamix
