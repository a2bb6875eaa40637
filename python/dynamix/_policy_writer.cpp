// dynamix.export_policy's writer for the networks dynamix knows (tanh MLPs): the policy.pt that
// `dynamix export` writes, with the Python model's weights, so that no code of the caller's goes
// into the file and every loader accepts it without a pin. A module of its own, loaded only by
// export_policy, because it links LibTorch (the same shared library Python's torch loads).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "policies/export/policy_metadata.h"
#include "policies/export/policy_snapshot.h"
#include "policies/export/torchscript_policy.h"
#include "sim/io/input_error.h"

namespace py = pybind11;

namespace dynamix {
namespace {

/// A layer from Python: its weight row-major [outputs × inputs], outputs, inputs, its bias.
using LayerTuple = std::tuple<std::vector<float>, std::size_t, std::size_t, std::vector<float>>;

/// Writes `path` as save_torchscript_policy does for the network `layers` behind the
/// normalization (mean, std, clip), with the metadata of the extra files `files`.
void write_dense_policy(const std::map<std::string, std::string>& files,
                        std::vector<float> observation_mean, std::vector<float> observation_std,
                        float observation_clip, const std::vector<LayerTuple>& layers,
                        const std::string& path) {
  PolicySnapshot snapshot;
  snapshot.metadata = from_extra_files(files, path);
  snapshot.observation_mean = std::move(observation_mean);
  snapshot.observation_std = std::move(observation_std);
  snapshot.observation_clip = observation_clip;
  std::size_t inputs = snapshot.metadata.features;
  for (const auto& [weight, outputs, layer_inputs, bias] : layers) {
    if (layer_inputs != inputs || weight.size() != outputs * layer_inputs ||
        bias.size() != outputs) {
      throw InputError(path, 0, "layer " + std::to_string(snapshot.layers.size()),
                       "a weight [outputs × " + std::to_string(inputs) + "] and a bias [outputs]",
                       "other shapes");
    }
    snapshot.layers.push_back({layer_inputs, outputs, weight, bias});
    inputs = outputs;
  }
  if (snapshot.observation_mean.size() != snapshot.metadata.features ||
      snapshot.observation_std.size() != snapshot.metadata.features || layers.empty() ||
      inputs != snapshot.metadata.actions.size()) {
    throw InputError(path, 0, "", "a network from the features to one logit per action",
                     "other shapes");
  }
  save_torchscript_policy(snapshot, path);
}

}  // namespace
}  // namespace dynamix

PYBIND11_MODULE(_policy_writer, m) {
  using namespace dynamix;
  m.doc() = "dynamix.export_policy's writer for tanh MLPs, which links LibTorch.";
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
  m.def("write_dense_policy", &write_dense_policy, py::arg("files"), py::arg("observation_mean"),
        py::arg("observation_std"), py::arg("observation_clip"), py::arg("layers"), py::arg("path"),
        "Writes a policy.pt as dynamix export does: the normalization, then the layers (tanh "
        "between them).");
  m.attr("max_layers") = kMaxPolicyLayers;
  m.attr("max_units") = kMaxPolicyUnits;
  m.attr("max_parameters") = kMaxPolicyParameters;
}
