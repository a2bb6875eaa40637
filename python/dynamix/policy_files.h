// What dynamix.export_policy needs from C++: a policy's extra files for an environment, and the
// policy file reader's checks of them, so that Python writes exactly what the loader reads.
#pragma once

#include <pybind11/pybind11.h>

#include <map>
#include <string>

#include "gym/batch_size_env.h"

namespace dynamix {

/// The extra files (schema.json, actions.json, ...) of a policy trained on `env`.
std::map<std::string, std::string> policy_extra_files(const BatchSizeEnv& env);

/// Adds read_policy_files(files, source) to `module`.
void bind_policy_files(pybind11::module_& module);

}  // namespace dynamix
