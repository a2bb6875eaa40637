// TorchScript export and loading of policies, built from C++ with aten built-ins only so that
// Python's torch.jit.load runs the same graph.
#include "policies/export/torchscript_policy.h"

#include <ATen/Parallel.h>
#include <c10/core/CPUAllocator.h>
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/script.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <mutex>
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

torch::jit::Module module_of(const PolicySnapshot& snapshot) {
  const std::size_t features = snapshot.observation_mean.size();
  DYNAMIX_CHECK(!snapshot.layers.empty() && snapshot.observation_std.size() == features &&
                    snapshot.layers.front().inputs == features,
                "snapshot of " << features << " features, " << snapshot.layers.size() << " layers");
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
  return module;
}

/// An archive's bytes for PyTorchStreamReader, reads past the end refused rather than made.
class BoundedReader final : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit BoundedReader(std::string_view bytes) : bytes_(bytes) {}
  std::size_t size() const override { return bytes_.size(); }
  std::size_t read(std::uint64_t pos, void* buffer, std::size_t n, const char*) const override {
    if (pos >= bytes_.size()) return 0;
    const std::size_t copied = std::min<std::uint64_t>(n, bytes_.size() - pos);
    std::memcpy(buffer, bytes_.data() + pos, copied);
    return copied;
  }

 private:
  std::string_view bytes_;
};

/// Every record of a zip archive but its extra files, by name (without the archive's folder).
std::map<std::string, std::string> records_of(std::string_view bytes) {
  caffe2::serialize::PyTorchStreamReader reader(std::make_shared<BoundedReader>(bytes));
  std::map<std::string, std::string> records;
  for (const std::string& name : reader.getAllRecords()) {
    if (name.starts_with("extra/")) {
      records.emplace(name, "");
      continue;
    }
    const auto [data, size] = reader.getRecord(name);
    records.emplace(name, std::string(static_cast<const char*>(data.get()), size));
  }
  return records;
}

/// The clip of the reference archives, a float whose pickled double is found nowhere else.
constexpr float kProbeClip = 1234.5678F;

/// Each layer's (inputs, outputs).
using LayerShapes = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// The layer shapes of a network whose tensors are stored as `records`
/// data/0, data/1 (normalization of F features), data/2 + 2i and data/3 + 2i (layer i's weight
/// [outputs × inputs] and bias), each float32: save_torchscript_policy's order. Empty unless
/// every record has the size its place implies and the shapes are within bounds.
LayerShapes layer_shapes(const std::map<std::string, std::string>& records, std::size_t layers) {
  const auto floats = [&](std::size_t index) -> std::int64_t {
    const auto found = records.find("data/" + std::to_string(index));
    if (found == records.end() || found->second.size() % sizeof(float) != 0) return -1;
    return static_cast<std::int64_t>(found->second.size() / sizeof(float));
  };
  LayerShapes shapes;
  std::int64_t inputs = floats(0);
  std::int64_t parameters = 0;
  if (inputs < 1 || inputs > static_cast<std::int64_t>(kMaxPolicyFeatures) || floats(1) != inputs) {
    return {};
  }
  for (std::size_t i = 0; i < layers; ++i) {
    const std::int64_t outputs = floats(3 + 2 * i);
    if (outputs < 1 || outputs > kMaxPolicyUnits || floats(2 + 2 * i) != outputs * inputs)
      return {};
    parameters += outputs * (inputs + 1);
    shapes.emplace_back(inputs, outputs);
    inputs = outputs;
  }
  return parameters <= kMaxPolicyParameters ? shapes : LayerShapes{};
}

/// The records save_torchscript_policy writes for a network of these layer shapes with clip
/// kProbeClip, extra files aside.
std::map<std::string, std::string> reference_records(const LayerShapes& shapes) {
  PolicySnapshot snapshot;
  const auto features = static_cast<std::size_t>(shapes.front().first);
  snapshot.observation_mean.assign(features, 0);
  snapshot.observation_std.assign(features, 1);
  snapshot.observation_clip = kProbeClip;
  for (const auto& [inputs, outputs] : shapes) {
    const auto in = static_cast<std::size_t>(inputs);
    const auto out = static_cast<std::size_t>(outputs);
    snapshot.layers.push_back({.inputs = in,
                               .outputs = out,
                               .weight = std::vector<float>(in * out),
                               .bias = std::vector<float>(out)});
  }
  std::ostringstream bytes;
  module_of(snapshot).save(bytes);
  return records_of(bytes.view());
}

/// Where the reference pickle holds the clip: the 8 bytes after its BINFLOAT opcode ('G',
/// a big-endian double; pickle protocol 2).
std::size_t clip_offset(const std::string& pickle) {
  std::string binfloat = "G";
  const auto bits = std::bit_cast<std::uint64_t>(static_cast<double>(kProbeClip));
  for (int shift = 56; shift >= 0; shift -= 8) {
    binfloat.push_back(static_cast<char>((bits >> shift) & 0xff));
  }
  const std::size_t at = pickle.find(binfloat);
  DYNAMIX_CHECK(at != std::string::npos && pickle.find(binfloat, at + 1) == std::string::npos,
                "the clip in a reference policy's pickle");
  return at + 1;
}

/// Refuses (PolicyFileError) an archive whose records are not exactly what
/// save_torchscript_policy writes for its shapes: the same TorchScript code, debug information
/// and constants byte for byte, the same pickled module (its clip aside), data records of the
/// sizes the pickle declares, and only dynamix's extra files. Returns the layer shapes. Nothing
/// in the archive is unpickled or run.
LayerShapes require_dynamix_code(std::string_view bytes, const std::string& source) {
  const auto refuse = [&](const std::string& found) {
    return PolicyFileError(source, 0, "",
                           "a policy.pt as dynamix export writes it (a file's own code runs "
                           "only trusted by its SHA-256: ppo:FILE@trust:HEX, "
                           "--trust-policy-code HEX)",
                           found);
  };
  std::map<std::string, std::string> records;
  try {
    records = records_of(bytes);
  } catch (const std::exception& error) {
    throw PolicyFileError(source, 0, "", "a TorchScript policy archive",
                          "an unreadable file (" + torch_error_line(error) + ")");
  }
  const std::vector<std::string> extras = extra_file_names();
  std::size_t data = 0;
  for (const auto& [name, content] : records) {
    if (name.starts_with("extra/")) {
      if (std::find(extras.begin(), extras.end(), name.substr(6)) == extras.end()) {
        throw refuse("an extra file " + excerpt(name));
      }
    } else if (name.starts_with("data/")) {
      ++data;
    }
  }
  const std::size_t layers = data >= 4 && data % 2 == 0 ? (data - 2) / 2 : 0;
  if (layers == 0 || layers > kMaxPolicyLayers) {
    throw refuse(std::to_string(data) + " tensors (a network of 1 to " +
                 std::to_string(kMaxPolicyLayers) + " layers has 4 to " +
                 std::to_string(2 + 2 * kMaxPolicyLayers) + ")");
  }
  const auto shapes = layer_shapes(records, layers);
  if (shapes.empty()) {
    throw refuse("tensors whose sizes are not a chain of " + std::to_string(layers) +
                 " layers of 1 to " + std::to_string(kMaxPolicyUnits) + " units, " +
                 std::to_string(kMaxPolicyParameters) + " parameters in all");
  }
  const std::map<std::string, std::string> reference = reference_records(shapes);
  for (const auto& [name, content] : records) {
    if (!name.starts_with("extra/") && !reference.contains(name)) {
      throw refuse("a record " + excerpt(name) + " dynamix does not write");
    }
  }
  for (const auto& [name, content] : reference) {
    const auto found = records.find(name);
    if (found == records.end()) throw refuse("no record '" + name + "'");
    if (name.starts_with("data/")) continue;  // the tensors' values, any
    std::string expected = content;
    if (name == "data.pkl" && found->second.size() == expected.size()) {
      const std::size_t clip = clip_offset(expected);
      expected.replace(clip, 8, found->second, clip, 8);
    }
    if (found->second != expected) {
      throw refuse("'" + name + "' other than dynamix's for " + std::to_string(layers) +
                   " layers (the file brings its own code or data)");
    }
  }
  return shapes;
}

/// What the records alone cannot tell (require_dynamix_code fixed every tensor's dtype, layout
/// and `shapes`): the shapes fit the metadata, the schema's features in and one logit per action
/// out; every value is finite, every spread above 0, and the clip a finite number above 0.
void check_parameters(const torch::jit::Module& module, const PolicyMetadata& metadata,
                      const LayerShapes& shapes, const std::string& source) {
  const auto tensor = [&](const std::string& name, const std::vector<std::int64_t>& shape,
                          std::string_view why) -> torch::Tensor {
    const torch::Tensor t = module.attr(name).toTensor();
    if (t.sizes() != c10::IntArrayRef(shape) || !torch::isfinite(t).all().item<bool>()) {
      std::ostringstream expected;
      expected << "finite float32 values of shape " << c10::IntArrayRef(shape) << why;
      std::ostringstream found;
      found << t.scalar_type() << " values of shape " << t.sizes();
      throw PolicyFileError(source, 0, name, expected.str(), found.str());
    }
    return t;
  };
  const auto features = static_cast<std::int64_t>(metadata.features);
  constexpr std::string_view kSchema = " (the features of schema.json)";
  tensor("observation_mean", {features}, kSchema);
  if (!(tensor("observation_std", {features}, kSchema) > 0).all().item<bool>()) {
    throw PolicyFileError(source, 0, "observation_std", "spreads above 0", "a spread of 0 or less");
  }
  const double clip = module.attr("observation_clip").toDouble();
  if (!std::isfinite(clip) || clip <= 0) {
    throw PolicyFileError(source, 0, "observation_clip", "a finite number above 0",
                          std::to_string(clip));
  }
  std::int64_t inputs = features;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const bool last = i + 1 == shapes.size();
    const std::int64_t outputs =
        last ? static_cast<std::int64_t>(metadata.actions.size()) : shapes[i].second;
    const std::string_view why = last ? " (a logit per action of actions.json)" : "";
    tensor("weight" + std::to_string(i), {outputs, inputs}, why);
    tensor("bias" + std::to_string(i), {outputs}, why);
    inputs = outputs;
  }
}

/// What a trusted file's code may allocate through LibTorch's CPU allocator in one decision.
constexpr std::size_t kTrustedDecisionBytes = std::size_t{1} << 30;

/// This thread's decision under the cap: bytes allocated so far, and whether it passed the cap.
struct DecisionBudget {
  bool capped = false;
  std::size_t allocated = 0;
  bool exceeded = false;
};
thread_local DecisionBudget decision_budget;

/// LibTorch's CPU allocator, with the allocations of a capped decision on the calling thread
/// counted and refused past kTrustedDecisionBytes (the policy runs on the deciding thread: one
/// intra-op thread). Other allocations pass through untouched.
class CappedAllocator final : public at::Allocator {
 public:
  explicit CappedAllocator(at::Allocator* inner) : inner_(inner) {}
  at::DataPtr allocate(std::size_t bytes) const override {
    DecisionBudget& budget = decision_budget;
    if (budget.capped) {
      budget.exceeded =
          bytes > kTrustedDecisionBytes - std::min(budget.allocated, kTrustedDecisionBytes);
      TORCH_CHECK(!budget.exceeded, "an allocation of ", bytes, " bytes past the cap");
      budget.allocated += bytes;
    }
    return inner_->allocate(bytes);
  }
  at::DeleterFnPtr raw_deleter() const override { return inner_->raw_deleter(); }

 private:
  at::Allocator* inner_;
};

/// Puts CappedAllocator in front of LibTorch's CPU allocator, once per process (LibTorch's
/// allocator registry is the process's).
void install_capped_allocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    static CappedAllocator allocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&allocator, /*priority=*/1);
  });
}

/// A trusted file's decision on this thread, under kTrustedDecisionBytes while it lives.
class CappedDecision {
 public:
  explicit CappedDecision(bool capped) { decision_budget = {.capped = capped}; }
  ~CappedDecision() { decision_budget = {}; }
  CappedDecision(const CappedDecision&) = delete;
  CappedDecision& operator=(const CappedDecision&) = delete;
  bool exceeded() const { return decision_budget.exceeded; }
};

}  // namespace

void save_torchscript_policy(const PolicySnapshot& snapshot, const std::filesystem::path& file) {
  DYNAMIX_CHECK(!snapshot.layers.empty() &&
                    snapshot.layers.back().outputs == snapshot.metadata.actions.size(),
                snapshot.layers.size()
                    << " layers for " << snapshot.metadata.actions.size() << " actions");
  torch::jit::Module module = module_of(snapshot);
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
  /// The file's own code runs (PolicyCode::kTrusted): each decision under the memory cap.
  bool trusted = false;
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
    : TorchScriptPolicy(read_policy_archive(file), file, PolicyCode::kDynamix) {}

TorchScriptPolicy::TorchScriptPolicy(const std::string& archive, const std::filesystem::path& file,
                                     PolicyCode code)
    : impl_(std::make_unique<Impl>()) {
  impl_->file = file;
  impl_->trusted = code == PolicyCode::kTrusted;
  if (impl_->trusted) install_capped_allocator();
  const LayerShapes shapes =
      code == PolicyCode::kDynamix ? require_dynamix_code(archive, file.string()) : LayerShapes{};
  // A trusted file's code runs from here (__setstate__, the check's forward): under the cap.
  const CappedDecision capped(impl_->trusted);
  std::istringstream stream(archive);
  torch::jit::ExtraFilesMap extra_files;
  for (const std::string& name : extra_file_names()) extra_files[name] = "";
  try {
    impl_->module = torch::jit::load(stream, torch::kCPU, extra_files);
  } catch (const std::exception& error) {
    throw PolicyFileError(file.string(), 0, "", "a TorchScript policy archive",
                          "an unreadable file (" + torch_error_line(error) + ")");
  }
  impl_->metadata = from_extra_files({extra_files.begin(), extra_files.end()}, file.string());
  impl_->actions = static_cast<std::int64_t>(impl_->metadata.actions.size());
  try {
    if (code == PolicyCode::kDynamix) {
      check_parameters(impl_->module, impl_->metadata, shapes, file.string());
    }
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
  torch::Tensor output;
  {
    const CappedDecision decision(impl_->trusted);
    try {
      output = impl_->module.forward({input}).toTensor().contiguous();
    } catch (const std::exception& error) {
      if (!decision.exceeded()) throw;
      throw PolicyFileError(impl_->file.string(), 0, "forward",
                            "a decision that allocates at most " +
                                std::to_string(kTrustedDecisionBytes >> 20) +
                                " MiB (the cap on a trusted file's own code)",
                            torch_error_line(error));
    }
  }
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
