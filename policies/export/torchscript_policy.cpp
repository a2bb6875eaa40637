// TorchScript export and loading of policies, built from C++ with aten built-ins only so that
// Python's torch.jit.load runs the same graph.
#include "policies/export/torchscript_policy.h"

#include <ATen/Parallel.h>
#include <torch/script.h>

#include <fstream>
#include <sstream>

#include "policies/export/torch_error.h"
#include "sim/core/check.h"
#include "sim/io/durable_file.h"

namespace dynamix {

namespace {

torch::Tensor tensor_of(const std::vector<float>& values, const std::vector<std::int64_t>& shape) {
  return torch::from_blob(const_cast<float*>(values.data()), shape, torch::kFloat32).clone();
}

std::string forward_source(std::size_t layers) {
  std::ostringstream out;
  out << "def forward(self, obs):\n"
         "    x = torch.clamp((obs - self.observation_mean) / self.observation_std, "
         "-self.observation_clip, self.observation_clip)\n";
  for (std::size_t i = 0; i < layers; ++i) {
    const std::string affine = "torch.addmm(self.bias" + std::to_string(i) + ", x, self.weight" +
                               std::to_string(i) + ".t())";
    out << (i + 1 < layers ? "    x = torch.tanh(" + affine + ")\n"
                           : "    return " + affine + "\n");
  }
  out << "def act(self, obs):\n"
         "    return torch.argmax(self.forward(obs), 1)\n";
  return out.str();
}

/// The module's normalization matches the schema's features, and a row of zeros gives one
/// finite logit per action.
void check_module(torch::jit::Module& module, const PolicyMetadata& metadata,
                  const std::string& source) {
  if (!module.hasattr("observation_mean") || !module.hasattr("observation_std") ||
      !module.find_method("forward")) {
    throw PolicyFileError(source, 0, "", "a dynamix policy module",
                          "a TorchScript module without observation_mean or forward");
  }
  const auto features = static_cast<std::int64_t>(metadata.features);
  for (const char* name : {"observation_mean", "observation_std"}) {
    const c10::IValue value = module.attr(name);
    if (!value.isTensor() || value.toTensor().dim() != 1 || value.toTensor().size(0) != features) {
      throw PolicyFileError(
          source, 0, name, std::to_string(features) + " values (the features of schema.json)",
          value.isTensor() ? std::to_string(value.toTensor().numel()) + " values" : "no tensor");
    }
  }
  c10::InferenceMode inference;
  const c10::IValue output = module.forward({torch::zeros({1, features}, torch::kFloat32)});
  const auto actions = static_cast<std::int64_t>(metadata.actions.size());
  if (!output.isTensor() || output.toTensor().dim() != 2 || output.toTensor().size(0) != 1 ||
      output.toTensor().size(1) != actions ||
      !torch::isfinite(output.toTensor()).all().item<bool>()) {
    throw PolicyFileError(source, 0, "forward",
                          std::to_string(actions) + " finite logits per worker (actions.json)",
                          "another output");
  }
}

}  // namespace

void save_torchscript_policy(const PolicySnapshot& snapshot, const std::filesystem::path& file) {
  const std::size_t features = snapshot.observation_mean.size();
  DYNAMIX_CHECK(!snapshot.layers.empty() && snapshot.observation_std.size() == features &&
                    snapshot.layers.front().inputs == features &&
                    snapshot.layers.back().outputs == snapshot.metadata.actions.size(),
                "snapshot of " << features << " features, " << snapshot.layers.size() << " layers, "
                               << snapshot.metadata.actions.size() << " actions");
  torch::jit::Module module("dynamix.BatchSizePolicy");
  const auto f = static_cast<std::int64_t>(features);
  module.register_buffer("observation_mean", tensor_of(snapshot.observation_mean, {f}));
  module.register_buffer("observation_std", tensor_of(snapshot.observation_std, {f}));
  module.register_attribute("observation_clip", c10::FloatType::get(),
                            static_cast<double>(snapshot.observation_clip));
  for (std::size_t i = 0; i < snapshot.layers.size(); ++i) {
    const DenseLayer& layer = snapshot.layers[i];
    DYNAMIX_CHECK(layer.weight.size() == layer.inputs * layer.outputs &&
                      layer.bias.size() == layer.outputs &&
                      (i == 0 || snapshot.layers[i - 1].outputs == layer.inputs),
                  "layer " << i << " of shape " << layer.outputs << "×" << layer.inputs);
    const auto out = static_cast<std::int64_t>(layer.outputs);
    const auto in = static_cast<std::int64_t>(layer.inputs);
    module.register_parameter("weight" + std::to_string(i), tensor_of(layer.weight, {out, in}),
                              false);
    module.register_parameter("bias" + std::to_string(i), tensor_of(layer.bias, {out}), false);
  }
  module.define(forward_source(snapshot.layers.size()));
  torch::jit::ExtraFilesMap extra_files;
  for (const auto& [name, content] : to_extra_files(snapshot.metadata)) extra_files[name] = content;
  // Serialized in memory, then written durably: LibTorch's file writer throws from its
  // destructor when a write fails (a full disk, a file-size limit), which ends the process.
  std::ostringstream bytes;
  try {
    module.save(bytes, extra_files);
  } catch (const std::exception& error) {
    throw PolicyFileError(file.string(), 0, "", "a policy that can be serialized",
                          torch_error_line(error));
  }
  write_durably(file, std::move(bytes).str());
}

struct TorchScriptPolicy::Impl {
  std::filesystem::path file;
  torch::jit::Module module;
  PolicyMetadata metadata;
  std::int64_t features = 0;
  std::int64_t actions = 0;
};

std::string read_policy_archive(const std::filesystem::path& file) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) {
    throw PolicyFileError(file.string(), 0, "", "a TorchScript policy file", "no such file");
  }
  const std::uintmax_t size = std::filesystem::file_size(file, error);
  if (error || size > kMaxPolicyBytes) {
    throw PolicyFileError(file.string(), 0, "", "a policy file of at most 64 MiB",
                          error ? error.message() : std::to_string(size) + " bytes");
  }
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) throw PolicyFileError(file.string(), 0, "", "a readable file", "a read error");
  return std::move(bytes).str();
}

TorchScriptPolicy::TorchScriptPolicy(const std::filesystem::path& file)
    : impl_(std::make_unique<Impl>()) {
  std::istringstream archive(read_policy_archive(file));
  load(archive, file);
}

TorchScriptPolicy::TorchScriptPolicy(std::istream& archive, const std::filesystem::path& file)
    : impl_(std::make_unique<Impl>()) {
  load(archive, file);
}

void TorchScriptPolicy::load(std::istream& archive, const std::filesystem::path& file) {
  impl_->file = file;
  torch::jit::ExtraFilesMap extra_files;
  for (const std::string& name : extra_file_names()) extra_files[name] = "";
  try {
    impl_->module = torch::jit::load(archive, torch::kCPU, extra_files);
  } catch (const std::exception& error) {
    throw PolicyFileError(file.string(), 0, "", "a TorchScript policy archive",
                          "an unreadable file (" + torch_error_line(error) + ")");
  }
  impl_->metadata = from_extra_files({extra_files.begin(), extra_files.end()}, file.string());
  impl_->actions = static_cast<std::int64_t>(impl_->metadata.actions.size());
  try {
    check_module(impl_->module, impl_->metadata, file.string());
  } catch (const PolicyFileError&) {
    throw;
  } catch (const std::exception& error) {
    throw PolicyFileError(file.string(), 0, "", "a dynamix policy module", torch_error_line(error));
  }
  impl_->module.eval();
  impl_->features = static_cast<std::int64_t>(impl_->metadata.features);
}

TorchScriptPolicy::~TorchScriptPolicy() = default;
TorchScriptPolicy::TorchScriptPolicy(TorchScriptPolicy&&) noexcept = default;
TorchScriptPolicy& TorchScriptPolicy::operator=(TorchScriptPolicy&&) noexcept = default;

const PolicyMetadata& TorchScriptPolicy::metadata() const { return impl_->metadata; }
const std::filesystem::path& TorchScriptPolicy::file() const { return impl_->file; }

std::vector<float> TorchScriptPolicy::observation_std() const {
  const torch::Tensor std =
      impl_->module.attr("observation_std").toTensor().to(torch::kFloat32).contiguous();
  return {std.data_ptr<float>(), std.data_ptr<float>() + std.numel()};
}

std::vector<float> TorchScriptPolicy::logits(const Observation& observation) const {
  DYNAMIX_CHECK(static_cast<std::int64_t>(observation.features) == impl_->features &&
                    observation.values.size() == observation.workers * observation.features,
                "observation of " << observation.workers << "×" << observation.features
                                  << " for a policy of " << impl_->features << " features");
  c10::InferenceMode inference;
  const torch::Tensor input = torch::from_blob(
      const_cast<float*>(observation.values.data()),
      {static_cast<std::int64_t>(observation.workers), impl_->features}, torch::kFloat32);
  const torch::Tensor output = impl_->module.forward({input}).toTensor().contiguous();
  if (output.dim() != 2 || output.size(0) != static_cast<std::int64_t>(observation.workers) ||
      output.size(1) != impl_->actions) {
    std::ostringstream shape;
    shape << output.sizes();
    throw PolicyFileError(impl_->file.string(), 0, "forward",
                          std::to_string(observation.workers) + " x " +
                              std::to_string(impl_->actions) + " logits (a row per worker)",
                          "an output of shape " + shape.str());
  }
  return std::vector<float>(output.data_ptr<float>(), output.data_ptr<float>() + output.numel());
}

std::vector<int> TorchScriptPolicy::greedy_actions(const Observation& observation) const {
  return greedy_of(logits(observation), static_cast<std::size_t>(impl_->actions));
}

std::vector<int> greedy_of(std::span<const float> logits, std::size_t actions) {
  DYNAMIX_CHECK(actions > 0 && logits.size() % actions == 0,
                logits.size() << " logits for " << actions << " actions");
  std::vector<int> chosen(logits.size() / actions, 0);
  for (std::size_t row = 0; row < chosen.size(); ++row) {
    const float* values = logits.data() + row * actions;
    for (std::size_t a = 1; a < actions; ++a) {
      if (values[a] > values[chosen[row]]) chosen[row] = static_cast<int>(a);
    }
  }
  return chosen;
}

}  // namespace dynamix
