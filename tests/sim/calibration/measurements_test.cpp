// Reading measurement CSVs: the schema of scripts/measure_cluster.py, optional columns, and one
// InputError naming file, line and column for each kind of bad input.
#include "sim/calibration/measurements.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/fixtures.h"

namespace dynamix {
namespace {

using testing::error_of;
using testing::TempDirectory;

const std::string kHeader =
    "# machine: test\n"
    "kind,ranks,message_bytes,batch_per_rank,compute_s,comm_s,total_s,repetitions\n";

TEST_CASE("read_measurements reads every kind, provenance and optional cells") {
  const TempDirectory dir;
  const std::string path = dir.write("m.csv", kHeader +
                                                  "allreduce,2,65536,,,0.001,0.001,9\n"
                                                  "iteration,4,,32,0.02,0.005,0.026,40\n"
                                                  "compute,1,,16,0.004,0,0.004,40\n");
  const MeasurementFile file = read_measurements(path);
  REQUIRE(file.rows.size() == 3);
  CHECK(file.provenance == std::vector<std::string>{"machine: test"});
  CHECK(file.rows[0].kind == MeasurementKind::kAllReduce);
  CHECK(file.rows[0].message_bytes == 65536);
  CHECK(!file.rows[0].compute_s);
  CHECK(file.rows[1].kind == MeasurementKind::kIteration);
  CHECK(file.rows[1].ranks == 4);
  CHECK(file.rows[1].batch_per_rank == 32);
  CHECK(*file.rows[1].comm_s == doctest::Approx(0.005));
  CHECK(file.rows[1].line == 4);
  CHECK(configuration_label(file.rows[0]) == "allreduce p=2 64KiB");
  CHECK(configuration_label(file.rows[1]) == "iteration p=4 b=32");
}

TEST_CASE("read_measurements names the file, line and column of bad input") {
  const TempDirectory dir;
  const auto error = [&](const std::string& text) {
    const std::string path = dir.write("bad.csv", text);
    return error_of([&] { read_measurements(path); });
  };
  CHECK(error("kind,ranks,message_bytes\nallreduce,2,65536\n")
            .find("bad.csv:1: header: expected a column named 'total_s'") != std::string::npos);
  CHECK(error("kind,ranks,total_s\nallreduce,2,0.1\n")
            .find("bad.csv:2: header: expected a column named 'message_bytes'") !=
        std::string::npos);
  CHECK(error(kHeader + "allreduce,2,65536,,,0.001,nan,9\n")
            .find("bad.csv:3: total_s: expected a finite number > 0, found 'nan'") !=
        std::string::npos);
  CHECK(error(kHeader + "broadcast,2,65536,,,0.001,0.001,9\n")
            .find("bad.csv:3: kind: expected allreduce, iteration or compute, found 'broadcast'") !=
        std::string::npos);
  CHECK(error(kHeader + "iteration,2.5,,32,,,0.01,9\n").find("bad.csv:3: ranks") !=
        std::string::npos);
  CHECK(error(kHeader + "iteration,2,,32,,,0.01\n").find("bad.csv:3: row") != std::string::npos);
  CHECK(error(kHeader).find("no rows") != std::string::npos);
  CHECK(error(kHeader + "allreduce,2,65536,,,0.001,0.001,9\niteration,2,,32,,,0.01,9\n" +
              "allreduce,2,65536,,,0.002,0.002,9\n")
            .ends_with("bad.csv:5: row: expected one row per configuration, found a second row "
                       "of allreduce p=2 64KiB (the first is on line 3)"));
}

TEST_CASE("a dynamix serve log's answered windows are iteration rows; refusals are skipped") {
  const TempDirectory dir;
  const std::string worker =
      R"({"gpu_type":"cpu","batch_size":B,"compute_s":C,"comm_s":0.01,"wait_s":0})";
  const auto with = [&](const std::string& batch, const std::string& compute) {
    std::string text = worker;
    text.replace(text.find('B'), 1, batch);
    text.replace(text.find('C'), 1, compute);
    return text;
  };
  const std::string answered = R"({"report":{"job_id":"cnn","metrics":{"iteration_s":0.05,)"
                               R"("workers":[)" +
                               with("64", "0.02") + "," + with("32", "0.04") +
                               R"(]}},"decision":{"batches":[64,32]}})";
  const std::string refused = R"({"report":{"job_id":"cnn","metrics":{"workers":[]}},)"
                              R"("refusal":"metrics.workers: expected 2 workers"})";
  const MeasurementFile file =
      read_measurements(dir.write("decisions.jsonl", answered + "\n" + refused + "\n"));
  REQUIRE(file.rows.size() == 1);
  const Measurement& row = file.rows[0];
  CHECK(row.kind == MeasurementKind::kIteration);
  CHECK(row.ranks == 2);
  CHECK(row.batches == std::vector<int>{64, 32});
  CHECK(*row.compute_s == doctest::Approx(0.03));
  CHECK(*row.comm_s == doctest::Approx(0.01));
  CHECK(row.total_s == doctest::Approx(0.05));
  CHECK(row.line == 1);
  CHECK(configuration_label(row) == "iteration p=2 b=64,32");
  CHECK(file.provenance.front().find("job 'cnn': 1 answered windows") != std::string::npos);
  CHECK(error_of([&] {
          read_measurements(dir.write("bad.jsonl", refused + "\n"));
        }).find("bad.jsonl:1: expected at least one answered window report") != std::string::npos);
}

}  // namespace
}  // namespace dynamix
