// Runs a fuzz target over many inputs in a child process that is restarted after each crash or
// hang, so that one run reports every failing input with its exception or sanitizer report.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "tests/fuzz/fuzz_targets.h"

namespace dynamix::fuzz {

/// An input that broke the contract.
struct Failure {
  std::size_t index = 0;
  /// "InvariantError: ...", "crashed (exit 1): SUMMARY: UndefinedBehaviorSanitizer: ...",
  /// "timed out after 10 s".
  std::string message;
};

struct SupervisorOptions {
  /// A single input running longer than this is a hang.
  std::chrono::seconds time_limit{10};
};

/// Runs `target` on every input; returns the failures in input order.
std::vector<Failure> run_supervised(Target target, const std::vector<std::string>& inputs,
                                    const SupervisorOptions& options = {});

/// Runs `target` on one input in this process: empty if it kept the contract, else what
/// escaped it ("InvariantError: ...").
std::string run_once(Target target, const std::string& input);

}  // namespace dynamix::fuzz
