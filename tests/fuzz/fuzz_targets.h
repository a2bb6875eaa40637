// Fuzz targets for the input loaders: each either accepts its input or refuses it with an
// InputError; anything else escaping a target (or a crash, a hang) is a bug.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dynamix::fuzz {

/// Raised by a target when a loader accepted input it should have refused (an accepted value
/// outside its documented range); the drivers report it as a contract failure.
class AcceptedInvalidInput : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// One loader under fuzzing: returns normally whether the input was accepted or refused with
/// an InputError; throws anything else.
using Target = void (*)(std::span<const std::uint8_t> input);

struct NamedTarget {
  /// Also the folder of its seeds, tests/fuzz/corpus/<name>/.
  std::string_view name;
  Target run;
  /// One line on what the input bytes are.
  std::string_view input;
};

/// Scenario YAML (topology inline or referenced), then one simulated iteration if accepted.
void fuzz_scenario(std::span<const std::uint8_t> input);
/// Topology YAML through ConfigNode and Topology::load, then ring routes if accepted.
void fuzz_topology(std::span<const std::uint8_t> input);
/// Bandwidth trace CSV, then lookups and one iteration of a scenario replaying it repeatedly.
void fuzz_trace(std::span<const std::uint8_t> input);
/// Lines: --batch-size, --batch-sizes, --schedule, worker count; BatchPlan::parse.
void fuzz_batch_plan(std::span<const std::uint8_t> input);
/// Lines: an embedded scenario's name, then one --set KEY=VALUE per line; load_scenario.
void fuzz_overrides(std::span<const std::uint8_t> input);
/// A policy archive's extra files ("== name" lines open each file); from_extra_files.
void fuzz_policy_metadata(std::span<const std::uint8_t> input);

/// A measurement CSV (calibrate --measured, fidelity) through read_measurements; checks what it
/// accepts against the schema's ranges and one row per configuration.
void fuzz_measurements(std::span<const std::uint8_t> input);

/// A WindowReport (protobuf JSON, or its binary form) through the arbitrator's checks, a served
/// rule (goodput:100) and the decision's bounds; where the protocol is built (DYNAMIX_PROTOCOL
/// in dynamix_config.h).
void fuzz_report(std::span<const std::uint8_t> input);

/// A client's HTTP/2 bytes through the gate's ConnectionLedger, as the gate feeds them; the
/// request bytes it holds never exceed those sent.
void fuzz_gate(std::span<const std::uint8_t> input);

/// Every target, in a fixed order.
std::span<const NamedTarget> targets();
/// The target called `name`, or nullptr.
const NamedTarget* find_target(std::string_view name);

/// The folder where process `pid` writes the files its targets load (created on first use,
/// removed at normal exit; a supervisor removes its children's, which exit without cleanup).
std::filesystem::path scratch_directory(int pid);

/// The input as text (bytes kept as they are).
std::string as_text(std::span<const std::uint8_t> input);
/// Splits on '\n'; a trailing '\r' is kept, as a user's file would have it.
std::vector<std::string> split_lines(std::string_view text);

}  // namespace dynamix::fuzz
