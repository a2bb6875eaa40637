// Loading background-traffic traces: the shipped file and every kind of bad input.
#include "sim/network/bandwidth_trace.h"

#include <doctest/doctest.h>

#include "sim/io/input_error.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

using std::chrono::milliseconds;

void check_error(const testing::TempDirectory& dir, const std::string& name,
                 const std::string& text, int line, const std::string& where) {
  const std::string path = dir.write(name, text);
  try {
    BandwidthTrace::load(path);
    FAIL("no InputError for " << name);
  } catch (const InputError& error) {
    CHECK(error.source() == path);
    CHECK(error.line() == line);
    CHECK(error.where() == where);
    CHECK(std::string(error.what()).starts_with(path + ":" + std::to_string(line)));
  }
}

TEST_CASE("a trace loads its steps in order") {
  const testing::TempDirectory dir;
  const std::string path =
      dir.write("good.csv", "time_s,background_gbps\n0,1.5\n0.25,0\r\n2,7\n\n");
  const BandwidthTrace trace = BandwidthTrace::load(path);
  REQUIRE(trace.steps.size() == 3);
  CHECK(trace.steps[1].offset == milliseconds(250));
  CHECK(trace.steps[2].background_gbps == 7);
  CHECK_FALSE(trace.repeat);
  CHECK(trace.period() == milliseconds(2000));
  CHECK(trace.background_gbps_at(milliseconds(100)) == 1.5);
  CHECK(trace.background_gbps_at(milliseconds(5000)) == 7);
}

TEST_CASE("the shipped diurnal trace loads from the embedded copy") {
  const BandwidthTrace trace = BandwidthTrace::load("embedded:/traces/diurnal_burst.csv");
  CHECK(trace.steps.size() >= 20);
  CHECK(trace.steps.front().offset == Duration{0});
}

TEST_CASE("trace loader errors name the file and line") {
  const testing::TempDirectory dir;
  check_error(dir, "empty.csv", "", 1, "");
  check_error(dir, "header_only.csv", "time_s,background_gbps\n", 2, "");
  check_error(dir, "wrong_header.csv", "t,gbps\n0,1\n", 1, "header");
  check_error(dir, "bad_number.csv", "time_s,background_gbps\n0,1\n1,fast\n", 3, "background_gbps");
  check_error(dir, "bad_time.csv", "time_s,background_gbps\n0,1\nsoon,1\n", 3, "time_s");
  check_error(dir, "negative.csv", "time_s,background_gbps\n0,1\n1,-2\n", 3, "background_gbps");
  check_error(dir, "non_monotonic.csv", "time_s,background_gbps\n0,1\n2,1\n1,1\n", 4, "time_s");
  check_error(dir, "repeated_time.csv", "time_s,background_gbps\n0,1\n0,2\n", 3, "time_s");
  check_error(dir, "late_start.csv", "time_s,background_gbps\n1,1\n", 2, "time_s");
  check_error(dir, "columns.csv", "time_s,background_gbps\n0,1,2\n", 2, "");
}

TEST_CASE("A trace refuses rows closer than 1 ms and times past 1e6 s") {
  const testing::TempDirectory dir;
  // A repeating trace with a 1 ns step once made one iteration take 32 s and 2 GB.
  check_error(dir, "nanosecond_step.csv", "time_s,background_gbps\n0,1\n0.000000001,2\n", 3,
              "time_s");
  check_error(dir, "sub_ms_step.csv", "time_s,background_gbps\n0,1\n1,2\n1.0009,3\n", 4, "time_s");
  check_error(dir, "huge_time.csv", "time_s,background_gbps\n0,1\n1e300,2\n", 3, "time_s");
  check_error(dir, "past_int64.csv", "time_s,background_gbps\n0,1\n9223372037,2\n", 3, "time_s");
  const BandwidthTrace trace = BandwidthTrace::load(
      dir.write("edges.csv", "time_s,background_gbps\n0,1\n0.001,2\n1000000,3\n"));
  CHECK(trace.steps.size() == 3);
  CHECK(trace.period() == std::chrono::seconds(1000000));
}

}  // namespace
}  // namespace dynamix
