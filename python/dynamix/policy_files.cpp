// A policy's extra files from Python, through the C++ writer and reader of policy.pt metadata.
#include "python/dynamix/policy_files.h"

#include <pybind11/stl.h>

#include "policies/export/policy_metadata.h"
// For kMaxPolicyBytes only; this header declares no LibTorch type.
#include "policies/export/torchscript_policy.h"

namespace py = pybind11;

namespace dynamix {

std::map<std::string, std::string> policy_extra_files(const BatchSizeEnv& env) {
  return to_extra_files(metadata_of(env));
}

namespace {

/// from_extra_files()'s reading of `files` as a dict; InputError (ValueError) as the loader
/// would raise it.
py::dict read_policy_files(const std::map<std::string, std::string>& files,
                           const std::string& source) {
  const PolicyMetadata metadata = from_extra_files(files, source);
  py::dict d;
  d["features"] = metadata.features;
  d["actions"] = metadata.actions;
  d["action_base"] = std::string(action_base_name(metadata.action_base));
  d["min_batch"] = metadata.min_batch;
  d["max_batch"] = metadata.max_batch;
  d["decision_interval"] = metadata.decision_interval;
  d["version"] = metadata.version;
  return d;
}

}  // namespace

void bind_policy_files(py::module_& module) {
  module.def("read_policy_files", &read_policy_files, py::arg("files"), py::arg("source"),
             "The metadata the policy loader reads from a policy.pt's extra files.");
  module.attr("max_policy_bytes") = kMaxPolicyBytes;
}

}  // namespace dynamix
