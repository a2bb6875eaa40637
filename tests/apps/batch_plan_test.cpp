// BatchPlan: a static batch, one batch per worker, an epoch schedule, and errors naming the option.
#include "apps/batch_plan.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "sim/io/input_error.h"

namespace dynamix {
namespace {

using Batches = std::vector<int>;

/// The one-line message of the InputError BatchPlan::parse throws, checked to name `option`.
std::string parse_error(const std::string& batch_size, const std::string& batch_sizes,
                        const std::string& schedule, const std::string& option) {
  std::optional<InputError> error;
  try {
    BatchPlan::parse(batch_size, batch_sizes, schedule, 4, 128);
  } catch (const InputError& caught) {
    error = caught;
  }
  REQUIRE_MESSAGE(error.has_value(), "parsed without an InputError");
  const std::string message = error->what();
  CAPTURE(message);
  CHECK(error->source() == option);
  CHECK(message.starts_with(option + ": expected "));
  CHECK(message.find('\n') == std::string::npos);
  return message;
}

TEST_CASE("without a batch option every worker gets the scenario's batch") {
  const BatchPlan plan = BatchPlan::parse("", "", "", 4, 128);
  CHECK(plan.at_epoch(0) == Batches{128, 128, 128, 128});
  CHECK(plan.at_epoch(100) == Batches{128, 128, 128, 128});
  CHECK(plan.description() == "static:128");
}

TEST_CASE("--batch-size gives every worker the same static batch") {
  const BatchPlan plan = BatchPlan::parse("64", "", "", 3, 128);
  CHECK(plan.at_epoch(0) == Batches{64, 64, 64});
  CHECK(plan.at_epoch(7.5) == Batches{64, 64, 64});
  CHECK(plan.description() == "static:64");
}

TEST_CASE("--batch-sizes gives each worker its own static batch, in worker order") {
  const BatchPlan plan = BatchPlan::parse("", "32,64,96,128", "", 4, 128);
  CHECK(plan.at_epoch(0) == Batches{32, 64, 96, 128});
  CHECK(plan.at_epoch(50) == Batches{32, 64, 96, 128});
  CHECK(plan.description() == "static:32,64,96,128");
}

TEST_CASE("--schedule switches every worker's batch at the given epochs") {
  const BatchPlan plan = BatchPlan::parse("", "", "0:64,10:128,25.5:256", 2, 128);
  CHECK(plan.at_epoch(0) == Batches{64, 64});
  CHECK(plan.at_epoch(9.99) == Batches{64, 64});
  CHECK(plan.at_epoch(10) == Batches{128, 128});
  CHECK(plan.at_epoch(25.4) == Batches{128, 128});
  CHECK(plan.at_epoch(25.5) == Batches{256, 256});
  CHECK(plan.at_epoch(1000) == Batches{256, 256});
  CHECK(plan.description() == "schedule:0:64,10:128,25.5:256");
}

TEST_CASE("a malformed schedule is rejected, quoting the bad pair") {
  for (const std::string schedule : {"0:64,10", "0-64", "0:64,x:128", "0:64,-1:128", ":64"}) {
    CAPTURE(schedule);
    parse_error("", "", schedule, "--schedule");
  }
  CHECK(parse_error("", "", "0:64,10", "--schedule").find("EPOCH:BATCH pairs") !=
        std::string::npos);
  CHECK(parse_error("", "", "0:64,10", "--schedule").find("found '10'") != std::string::npos);
  CHECK(parse_error("", "", "0:64,10:", "--schedule").find("a batch size") != std::string::npos);
  CHECK(parse_error("", "", "0:64,10:0", "--schedule").find("integer >= 1") != std::string::npos);
  CHECK(parse_error("", "", "0:64,", "--schedule").find("found ''") != std::string::npos);
}

TEST_CASE("a schedule whose epochs do not strictly increase is rejected") {
  const std::string repeated = parse_error("", "", "0:64,10:128,10:256", "--schedule");
  CHECK(repeated.find("strictly increasing epochs") != std::string::npos);
  CHECK(repeated.find("'10:256'") != std::string::npos);
  const std::string decreasing = parse_error("", "", "0:64,10:128,5:256", "--schedule");
  CHECK(decreasing.find("strictly increasing epochs") != std::string::npos);
}

TEST_CASE("a schedule must start at epoch 0") {
  const std::string message = parse_error("", "", "5:64,10:128", "--schedule");
  CHECK(message.find("epoch 0") != std::string::npos);
  CHECK(message.find("'5:64'") != std::string::npos);
}

TEST_CASE("--batch-sizes with the wrong count of batches says how many are needed") {
  const std::string too_few = parse_error("", "64,64,64", "", "--batch-sizes");
  CHECK(too_few == "--batch-sizes: expected 4 batch sizes, one per worker, found 3");
  const std::string too_many = parse_error("", "64,64,64,64,64", "", "--batch-sizes");
  CHECK(too_many == "--batch-sizes: expected 4 batch sizes, one per worker, found 5");
  parse_error("", "64,64,,64", "", "--batch-sizes");
  parse_error("", "64,64,64,64,", "", "--batch-sizes");
  CHECK(parse_error("", "64,0,64,64", "", "--batch-sizes").find("found '0'") != std::string::npos);
}

TEST_CASE("--batch-size must be an integer >= 1") {
  for (const std::string batch : {"0", "-8", "12.5", "big", "64x"}) {
    CAPTURE(batch);
    const std::string message = parse_error(batch, "", "", "--batch-size");
    CHECK(message.find("found '" + batch + "'") != std::string::npos);
  }
}

TEST_CASE("two batch options at once are rejected") {
  const std::string option = "--batch-size/--batch-sizes/--schedule";
  CHECK(parse_error("64", "64,64,64,64", "", option).find("at most one of them") !=
        std::string::npos);
  parse_error("64", "", "0:64", option);
  parse_error("", "64,64,64,64", "0:64", option);
  CHECK(parse_error("64", "64,64,64,64", "0:64", option).find("found 3") != std::string::npos);
}

}  // namespace
}  // namespace dynamix
