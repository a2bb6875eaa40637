// The version every run directory and run.json is stamped with, and `dynamix version` prints.
#pragma once

namespace dynamix {

#ifndef DYNAMIX_VERSION
#error "DYNAMIX_VERSION (the project version in meson.build) must be defined by the build"
#endif
/// The project's version, as meson.build declares it.
inline constexpr const char* kDynamixVersion = DYNAMIX_VERSION;

}  // namespace dynamix
