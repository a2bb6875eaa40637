// Loading background-traffic traces: the shipped file and every kind of bad input.
#include "sim/network/bandwidth_trace.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

using std::chrono::milliseconds;

std::string write_trace(const std::string& name, const std::string& text) {
  // One directory per process, so concurrent test runs do not collide.
  const auto dir = std::filesystem::temp_directory_path() /
                   ("dynamix_bandwidth_trace_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

void check_error(const std::string& name, const std::string& text, int line,
                 const std::string& where) {
  const std::string path = write_trace(name, text);
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
  const std::string path =
      write_trace("good.csv", "time_s,background_gbps\n0,1.5\n0.25,0\r\n2,7\n\n");
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
  check_error("empty.csv", "", 1, "");
  check_error("header_only.csv", "time_s,background_gbps\n", 2, "");
  check_error("wrong_header.csv", "t,gbps\n0,1\n", 1, "header");
  check_error("bad_number.csv", "time_s,background_gbps\n0,1\n1,fast\n", 3, "background_gbps");
  check_error("bad_time.csv", "time_s,background_gbps\n0,1\nsoon,1\n", 3, "time_s");
  check_error("negative.csv", "time_s,background_gbps\n0,1\n1,-2\n", 3, "background_gbps");
  check_error("non_monotonic.csv", "time_s,background_gbps\n0,1\n2,1\n1,1\n", 4, "time_s");
  check_error("repeated_time.csv", "time_s,background_gbps\n0,1\n0,2\n", 3, "time_s");
  check_error("late_start.csv", "time_s,background_gbps\n1,1\n", 2, "time_s");
  check_error("columns.csv", "time_s,background_gbps\n0,1,2\n", 2, "");
}

TEST_CASE("A trace refuses rows closer than 1 ms and times past 1e6 s") {
  // A repeating trace with a 1 ns step once made one iteration take 32 s and 2 GB.
  check_error("nanosecond_step.csv", "time_s,background_gbps\n0,1\n0.000000001,2\n", 3, "time_s");
  check_error("sub_ms_step.csv", "time_s,background_gbps\n0,1\n1,2\n1.0009,3\n", 4, "time_s");
  check_error("huge_time.csv", "time_s,background_gbps\n0,1\n1e300,2\n", 3, "time_s");
  check_error("past_int64.csv", "time_s,background_gbps\n0,1\n9223372037,2\n", 3, "time_s");
  const BandwidthTrace trace = BandwidthTrace::load(
      write_trace("edges.csv", "time_s,background_gbps\n0,1\n0.001,2\n1000000,3\n"));
  CHECK(trace.steps.size() == 3);
  CHECK(trace.period() == std::chrono::seconds(1000000));
}

}  // namespace
}  // namespace dynamix
