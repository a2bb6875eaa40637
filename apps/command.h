// A dynamix command as the command table lists it: each command's header provides its entry,
// and apps/commands.cpp assembles them in the order `dynamix --help` shows.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dynamix {

/// Runs a command on its arguments (those after its name); returns the exit status.
using CommandRun = int (*)(const std::vector<std::string>& args);

struct Command {
  /// What follows `dynamix` on the command line.
  const char* name;
  /// Its line in `dynamix --help`.
  const char* help;
  /// Null for a command that needs LibTorch in an executable without it (dynamix, which hands
  /// such a command line to dynamix-torch).
  CommandRun run = nullptr;
};

/// What a command line asked for needs LibTorch, which this executable leaves out: a command
/// (train) or a policy (ppo:FILE). dynamix runs dynamix-torch in its place.
class NeedsLibTorch : public std::runtime_error {
 public:
  /// `source`: where it was asked for ("command line", "--policies"); `request`: what.
  NeedsLibTorch(std::string source, std::string request)
      : std::runtime_error(source + ": " + request + " needs LibTorch"),
        source_(std::move(source)),
        request_(std::move(request)) {}
  const std::string& source() const { return source_; }
  const std::string& request() const { return request_; }

 private:
  std::string source_;
  std::string request_;
};

}  // namespace dynamix
