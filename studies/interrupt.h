// Ctrl-C and SIGTERM as a request to stop at a safe point, so commands clean up what they staged.
#pragma once

#include <signal.h>

#include <stdexcept>

namespace dynamix {

/// Thrown by InterruptScope::check() after SIGINT or SIGTERM; the command exits with 130.
class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

/// While alive, SIGINT and SIGTERM only raise a flag (a second signal acts as usual), and the
/// previous handlers come back when it ends. One scope at a time per process.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  bool requested() const;
  /// Throws Interrupted when a signal has arrived, so that destructors remove staged output.
  void check() const;

 private:
  struct sigaction previous_interrupt_ = {};
  struct sigaction previous_terminate_ = {};
};

}  // namespace dynamix
