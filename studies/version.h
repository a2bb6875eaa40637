// The version every run directory and run.json is stamped with, and `dynamix version` prints.
#pragma once

#include "dynamix_config.h"

namespace dynamix {

/// The project's version, as meson.build's project() declares it.
inline constexpr const char* kDynamixVersion = DYNAMIX_VERSION;

}  // namespace dynamix
