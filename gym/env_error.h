// The typed error for misuse of the environment layer.
#pragma once

#include <stdexcept>

namespace dynamix {

/// Misuse of the environment (wrong action vector, step after the end, bad options).
class EnvError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace dynamix
