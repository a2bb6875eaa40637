// The one assertion for broken internal invariants (never for bad input).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace dynamix {

/// Thrown when an internal invariant fails: a bug in dynamix, not in the user's input.
class InvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {
[[noreturn]] inline void fail_check(const char* condition, const char* file, int line,
                                    const std::string& message) {
  std::ostringstream out;
  out << file << ':' << line << ": invariant '" << condition << "' failed: " << message;
  throw InvariantError(out.str());
}
}  // namespace detail

}  // namespace dynamix

/// DYNAMIX_CHECK(cond, "queue size " << n): the streamed message carries the values involved.
#define DYNAMIX_CHECK(condition, message)                                                         \
  do {                                                                                            \
    if (!(condition)) {                                                                           \
      std::ostringstream dynamix_check_stream_;                                                   \
      dynamix_check_stream_ << message;                                                           \
      ::dynamix::detail::fail_check(#condition, __FILE__, __LINE__, dynamix_check_stream_.str()); \
    }                                                                                             \
  } while (false)
