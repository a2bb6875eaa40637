// TorchScript export: same logits in C++ and in Python's torch.jit.load, metadata, bad files.
#include "policies/export/torchscript_policy.h"

// LibTorch's logging defines a CHECK family of its own: included first, so that doctest's wins.
#include <caffe2/serialize/inline_container.h>
#include <torch/script.h>
#undef CHECK
#undef CHECK_EQ
#undef CHECK_NE
#undef CHECK_LT
#undef CHECK_LE
#undef CHECK_GT
#undef CHECK_GE

#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "dynamix_config.h"
#include "policies/export/torch_threads.h"
#include "policies/ppo/ppo_learner.h"
#include "policies/ppo/running_mean_std.h"
#include "sim/core/random.h"
#include "tests/fixtures.h"

namespace dynamix {

namespace {

constexpr std::size_t kWorkers = 32;
constexpr const char* kSchema =
    R"({"version": 1, "local": [{"name": "batch_size", "unit": "samples"}, )"
    R"({"name": "throughput_gbps", "unit": "Gb/s"}, {"name": "retransmit_rate", "unit": "1"}], )"
    R"("global": [{"name": "validation_accuracy", "unit": "1"}, {"name": "progress", "unit": "1"}]})";
constexpr std::size_t kFeatures = 5;
const std::vector<int> kActionSet = {-100, -25, 0, 25, 100};

std::filesystem::path temporary(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         ("dynamix_export_test_" + std::to_string(::getpid()) + "_" + name);
}

Observation random_observation(std::uint64_t seed) {
  Rng rng(seed, stream_id("test.observation"));
  Observation observation{kWorkers, kFeatures, {}};
  for (std::size_t i = 0; i < kWorkers * kFeatures; ++i) {
    observation.values.push_back(static_cast<float>(rng.uniform(-3, 300)));
  }
  return observation;
}

/// A randomly initialized learner with observation statistics, as the trainer would export it.
struct ExportedPolicy {
  PpoLearner learner{kFeatures, kActionSet.size(), {.seed = 21}};
  RunningMeanStd statistics{kFeatures};
  PolicySnapshot snapshot;

  ExportedPolicy() {
    statistics.update(random_observation(1).values, kWorkers);
    snapshot.metadata = {.schema_json = kSchema,
                         .actions = kActionSet,
                         .action_base = ActionBase::kBalanced,
                         .min_batch = 32,
                         .max_batch = 1024,
                         .decision_interval = 10};
    snapshot.observation_mean = statistics.float_mean();
    snapshot.observation_std = statistics.float_std();
    snapshot.observation_clip = 10;
    snapshot.layers = learner.actor_layers();
  }

  std::vector<float> learner_logits(const Observation& observation) {
    std::vector<float> normalized(observation.values.size());
    statistics.normalize(observation.values, normalized, snapshot.observation_clip);
    return learner.logits(normalized);
  }
};

bool python_has_torch() {
  return std::system(DYNAMIX_PYTHON " -c 'import torch' > /dev/null 2>&1") == 0;
}

std::vector<float> hex_floats(std::istringstream& line) {
  std::vector<float> values;
  std::string word;
  while (line >> word) values.push_back(std::strtof(word.c_str(), nullptr));
  return values;
}

std::string message_of(const std::filesystem::path& file) {
  try {
    TorchScriptPolicy policy(file);
  } catch (const PolicyFileError& error) {
    return error.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("Exported policy computes the trainer's logits with normalization inside") {
  ExportedPolicy exported;
  const std::filesystem::path file = temporary("same.pt");
  save_torchscript_policy(exported.snapshot, file);
  const TorchScriptPolicy policy(file);
  const Observation observation = random_observation(2);
  CHECK(policy.logits(observation) == exported.learner_logits(observation));

  const PolicyMetadata& metadata = policy.metadata();
  CHECK(metadata.schema_json == kSchema);
  CHECK(metadata.actions == kActionSet);
  CHECK(metadata.action_base == ActionBase::kBalanced);
  CHECK(metadata.min_batch == 32);
  CHECK(metadata.max_batch == 1024);
  CHECK(metadata.decision_interval == 10);
  CHECK(metadata.version == PolicyMetadata::kFormatVersion);
  std::filesystem::remove(file);
}

TEST_CASE("Python's torch.jit.load gives the same logits and greedy actions as C++") {
  ExportedPolicy exported;
  const std::filesystem::path file = temporary("python.pt");
  const std::filesystem::path observations = temporary("python_observations.txt");
  const std::filesystem::path output = temporary("python_output.txt");
  save_torchscript_policy(exported.snapshot, file);
  const Observation observation = random_observation(3);
  {
    std::ofstream out(observations);
    for (std::size_t w = 0; w < kWorkers; ++w) {
      for (std::size_t f = 0; f < kFeatures; ++f) {
        char text[64];
        std::snprintf(text, sizeof text, "%a ", observation.values[w * kFeatures + f]);
        out << text;
      }
      out << '\n';
    }
  }
  const std::string command = std::string(DYNAMIX_PYTHON " ") + DYNAMIX_SOURCE_DIR +
                              "/tests/policies/export/check_policy.py " + file.string() + " " +
                              observations.string() + " " + output.string();
  // Asked only when the check fails: importing torch takes about a CPU-second.
  if (std::system(command.c_str()) != 0) {
    REQUIRE_FALSE(python_has_torch());
    MESSAGE("skipped: " DYNAMIX_PYTHON " cannot import torch (apt install python3-torch)");
    return;
  }

  const TorchScriptPolicy policy(file);
  const std::vector<float> logits = policy.logits(observation);
  const std::vector<int> greedy = policy.greedy_actions(observation);
  std::ifstream in(output);
  std::string line;
  std::string label;
  REQUIRE(std::getline(in, line));
  std::istringstream actions_line(line);
  actions_line >> label;
  CHECK(label == "actions");
  std::vector<int> python_greedy;
  for (int a; actions_line >> a;) python_greedy.push_back(a);
  CHECK(python_greedy == greedy);

  REQUIRE(std::getline(in, line));
  CHECK(line == "action_set -100 -25 0 25 100");
  REQUIRE(std::getline(in, line));
  CHECK(line == "action_base balanced");
  REQUIRE(std::getline(in, line));
  CHECK(line == "decision_interval 10");

  std::vector<float> python_logits;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    const std::vector<float> values = hex_floats(row);
    python_logits.insert(python_logits.end(), values.begin(), values.end());
  }
  REQUIRE(python_logits.size() == logits.size());
  for (std::size_t i = 0; i < logits.size(); ++i) {
    CAPTURE(i);
    CHECK(python_logits[i] == doctest::Approx(logits[i]).epsilon(1e-6));
  }
  std::filesystem::remove(file);
  std::filesystem::remove(observations);
  std::filesystem::remove(output);
}

TEST_CASE("A learner and a policy leave LibTorch's threads as the program set them") {
  const int before = torch_threads();
  const int chosen = before == 2 ? 3 : 2;
  set_torch_threads(chosen);
  ExportedPolicy exported;  // a learner
  const std::filesystem::path file = temporary("threads.pt");
  save_torchscript_policy(exported.snapshot, file);
  const TorchScriptPolicy policy(file);
  CHECK(policy.logits(random_observation(3)) == exported.learner_logits(random_observation(3)));
  CHECK(torch_threads() == chosen);
  std::filesystem::remove(file);
  set_torch_threads(before);
}

TEST_CASE("Missing and corrupt policy files are refused with what is wrong") {
  const std::filesystem::path file = temporary("corrupt.pt");
  std::filesystem::remove(file);
  CHECK(message_of(file).find("no such file") != std::string::npos);

  std::ofstream(file) << "definitely not a zip archive";
  const std::string corrupt = message_of(file);
  CAPTURE(corrupt);
  CHECK(corrupt.find(file.string()) == 0);
  CHECK(corrupt.find("expected a TorchScript policy archive, found an unreadable file") !=
        std::string::npos);
  std::filesystem::remove(file);
}

TEST_CASE(
    "A policy for another observation schema or action set is refused naming the difference") {
  ExportedPolicy exported;
  const std::filesystem::path file = temporary("compatible.pt");
  save_torchscript_policy(exported.snapshot, file);
  const PolicyMetadata metadata = TorchScriptPolicy(file).metadata();
  CHECK(incompatibilities(metadata, kSchema, kActionSet).empty());
  std::filesystem::remove(file);

  std::string renamed = kSchema;
  renamed.replace(renamed.find("retransmit_rate"), 15, "cpu_time_ratio");
  auto refusal = [&](const std::string& schema, const std::vector<int>& actions) {
    try {
      require_compatible(metadata, schema, actions, "policy.pt");
    } catch (const PolicyFileError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  CHECK(refusal(renamed, kActionSet) ==
        "policy.pt: schema.json: local[2].name: expected 'cpu_time_ratio' (this environment), "
        "found 'retransmit_rate'");

  std::string shorter = kSchema;
  shorter.replace(shorter.find(R"(, {"name": "progress", "unit": "1"})"), 35, "");
  CHECK(refusal(shorter, kActionSet) ==
        "policy.pt: schema.json: global: expected 1 entries (this environment), found 2 entries");

  CHECK(refusal(kSchema, {-50, 0, 50}) ==
        "policy.pt: actions.json: expected [-50, 0, 50] (this environment's action set), found "
        "[-100, -25, 0, 25, 100]");
  CHECK(refusal(renamed, {0}).find("(and 1 more differences)") != std::string::npos);
}

TEST_CASE("A TorchScript archive without dynamix metadata is refused") {
  ExportedPolicy exported;
  exported.snapshot.metadata.version = 99;
  const std::filesystem::path file = temporary("future.pt");
  save_torchscript_policy(exported.snapshot, file);
  CHECK(message_of(file).find("version: expected policy format 2, found 99") != std::string::npos);
  std::filesystem::remove(file);
}

TEST_CASE("A policy whose action base this build does not know is refused") {
  std::map<std::string, std::string> files = to_extra_files(ExportedPolicy().snapshot.metadata);
  CHECK(from_extra_files(files, "policy.pt").action_base == ActionBase::kBalanced);
  files["action_base"] = "sideways";
  CHECK_THROWS_WITH_AS(
      from_extra_files(files, "policy.pt"),
      "policy.pt: action_base: expected one of current, balanced, global, noise, goodput, "
      "goodput-steady, rule, found "
      "'sideways'",
      PolicyFileError);
  // A noise-base policy's actions are percentages of the noise scale, all above 0.
  files["action_base"] = "noise";
  files["actions.json"] = "[0, 100, 400]";
  CHECK_THROWS_WITH_AS(from_extra_files(files, "policy.pt"),
                       "policy.pt: actions.json: expected percentages of the noise scale above 0, "
                       "found '0'",
                       PolicyFileError);
  files["actions.json"] = "[100, 400]";
  CHECK(from_extra_files(files, "policy.pt").action_base == ActionBase::kNoise);
}

TEST_CASE("A policy.pt with metadata out of range is refused in one short line naming the entry") {
  auto refusal = [](auto change) {
    ExportedPolicy exported;
    change(exported.snapshot.metadata);
    const std::filesystem::path file = temporary("out_of_range.pt");
    save_torchscript_policy(exported.snapshot, file);
    const std::string message = message_of(file);
    std::filesystem::remove(file);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.size() < 200);
    return message == "accepted" ? message : message.substr(message.find(": ") + 2);
  };
  CHECK(refusal([](PolicyMetadata& m) { std::swap(m.min_batch, m.max_batch); }) ==
        "bounds.json: max_batch: expected an integer in [1024, 16777216], found '32'");
  CHECK(refusal([](PolicyMetadata& m) { m.min_batch = 0; }) ==
        "bounds.json: min_batch: expected an integer in [1, 16777216], found '0'");
  CHECK(refusal([](PolicyMetadata& m) { m.decision_interval = 0; }) ==
        "decision_interval: expected an integer in [1, 1048576], found '0'");
  CHECK(refusal([](PolicyMetadata& m) { m.decision_interval = -10; }) ==
        "decision_interval: expected an integer in [1, 1048576], found '-10'");
  CHECK(refusal([](PolicyMetadata& m) {
          m.actions = {0, 0, 25, 50, 100};
        }) ==
        "actions.json[1]: expected a batch change that no other action has, found a second 0");
  CHECK(refusal([](PolicyMetadata& m) {
          m.actions = {-100, -25, 0, 25, 1 << 30};
        }) == "actions.json[4]: expected an integer in [-16777216, 16777216], found '1073741824'");
  CHECK(refusal([](PolicyMetadata& m) { m.schema_json = R"({"local": [], "global": [{}]})"; }) ==
        "observation_mean: expected finite float32 values of shape [1] (the features of "
        "schema.json), found Float values of shape [5]");
  CHECK(refusal([](PolicyMetadata&) {}) == "accepted");
}

TEST_CASE("Bad actions.json and bounds.json are quoted in a short excerpt on one line") {
  std::map<std::string, std::string> files = to_extra_files(ExportedPolicy().snapshot.metadata);
  files["actions.json"] = "[\n  -100,\n  -25,\n  0,\n  \"more\",\n  25,\n  100\n]";
  CHECK(testing::error_of([&] { from_extra_files(files, "policy.pt"); }) ==
        "policy.pt: actions.json[3]: expected an integer in [-16777216, 16777216], found 'more'");
  files["actions.json"] =
      "{\n  \"not\": \"a list\",\n  \"padding\": \"" + std::string(500, 'x') + "\"\n}";
  CHECK(testing::error_of([&] { from_extra_files(files, "policy.pt"); }) ==
        "policy.pt: actions.json: expected a list of 1 to 256 integers, found "
        "'{\\n  \"not\": \"a list\",\\n  \"padding\": \"xxxxx...' (538 bytes)");
  files = to_extra_files(ExportedPolicy().snapshot.metadata);
  files["bounds.json"] = "{\n  \"min_batch\": 32,\n  \"max_batch\": [1,\n 2]\n}";
  CHECK(testing::error_of([&] { from_extra_files(files, "policy.pt"); }) ==
        "policy.pt: bounds.json: max_batch: expected an integer in [32, 16777216], found a list "
        "of 2");
}

TEST_CASE("A policy.pt with flipped bytes is refused in one short line or loads, never raw") {
  ExportedPolicy exported;
  const std::filesystem::path file = temporary("flipped.pt");
  save_torchscript_policy(exported.snapshot, file);
  std::string original;
  {
    std::ifstream in(file, std::ios::binary);
    original.assign(std::istreambuf_iterator<char>(in), {});
  }
  REQUIRE(original.size() > 1000);
  int refused = 0;
  for (std::size_t at = 11; at < original.size(); at += original.size() / 29) {
    std::string flipped = original;
    for (std::size_t i = at; i < std::min(at + 16, flipped.size()); ++i) flipped[i] ^= 0x5a;
    std::ofstream(file, std::ios::binary) << flipped;
    CAPTURE(at);
    try {
      const TorchScriptPolicy policy(file);
      policy.logits(random_observation(3));
    } catch (const PolicyFileError& error) {
      ++refused;
      const std::string message = error.what();
      CAPTURE(message);
      CHECK(message.find('\n') == std::string::npos);
      CHECK(message.size() < 400);
    }
  }
  CHECK(refused >= 3);
  std::filesystem::remove(file);
}

namespace {

std::string bytes_of(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

/// `archive` with records replaced, added or (nullopt) dropped, named without "archive/".
std::string rewritten(const std::string& archive,
                      const std::map<std::string, std::optional<std::string>>& changes) {
  std::istringstream in(archive);
  caffe2::serialize::PyTorchStreamReader reader(&in);
  std::string out;
  {
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, std::size_t size) {
      out.append(static_cast<const char*>(data), size);
      return size;
    });
    for (const std::string& name : reader.getAllRecords()) {
      if (changes.contains(name)) continue;
      const auto [data, size] = reader.getRecord(name);
      writer.writeRecord(name, data.get(), size);
    }
    for (const auto& [name, content] : changes) {
      if (content) writer.writeRecord(name, content->data(), content->size());
    }
    writer.writeEndOfFile();
  }
  return out;
}

const std::string kExpected =
    "expected a policy.pt as dynamix export writes it (a file's own code runs only trusted by "
    "its SHA-256: ppo:FILE@trust:HEX, --trust-policy-code HEX), found ";

/// What loading `archive` under `code` says: "accepted" or the error after the file name.
std::string verdict(const std::string& archive, PolicyCode code = PolicyCode::kDynamix) {
  try {
    TorchScriptPolicy(archive, "policy.pt", code);
  } catch (const PolicyFileError& error) {
    const std::string message = error.what();
    return message.substr(message.find(": ") + 2);
  }
  return "accepted";
}

/// A module with a dynamix policy's tensors and metadata but code of its own: `source` defines
/// its methods.
std::string own_code_archive(const ExportedPolicy& exported, const std::string& source) {
  torch::jit::Module module("dynamix.BatchSizePolicy");
  const auto tensor = [](const std::vector<float>& values, const std::vector<std::int64_t>& shape) {
    return torch::tensor(values).reshape(shape);
  };
  const auto features = static_cast<std::int64_t>(kFeatures);
  module.register_buffer("observation_mean",
                         tensor(exported.snapshot.observation_mean, {features}));
  module.register_buffer("observation_std", tensor(exported.snapshot.observation_std, {features}));
  module.register_attribute("observation_clip", c10::FloatType::get(), 10.0);
  for (std::size_t i = 0; i < exported.snapshot.layers.size(); ++i) {
    const DenseLayer& layer = exported.snapshot.layers[i];
    const auto out = static_cast<std::int64_t>(layer.outputs);
    const auto in = static_cast<std::int64_t>(layer.inputs);
    module.register_parameter("weight" + std::to_string(i), tensor(layer.weight, {out, in}), false);
    module.register_parameter("bias" + std::to_string(i), tensor(layer.bias, {out}), false);
  }
  module.define(source);
  torch::jit::ExtraFilesMap extra_files;
  for (const auto& [name, content] : to_extra_files(exported.snapshot.metadata)) {
    extra_files[name] = content;
  }
  std::ostringstream bytes;
  module.save(bytes, extra_files);
  return bytes.str();
}

}  // namespace

TEST_CASE("A policy file's own code is refused before any of it runs, unless trusted") {
  ExportedPolicy exported;
  const std::filesystem::path file = temporary("own_code.pt");
  save_torchscript_policy(exported.snapshot, file);
  const std::string archive = bytes_of(file);
  std::filesystem::remove(file);
  REQUIRE(verdict(archive) == "accepted");

  // Code that would run at load (__setstate__) and at every decision (forward) does not run:
  // the refusal comes first, and names what differs.
  const std::string relu_forward =
      "def forward(self, obs):\n"
      "    x = torch.clamp((obs - self.observation_mean) / self.observation_std, -10.0, 10.0)\n"
      "    x = torch.relu(torch.addmm(self.bias0, x, self.weight0.t()))\n"
      "    x = torch.relu(torch.addmm(self.bias1, x, self.weight1.t()))\n"
      "    return torch.addmm(self.bias2, x, self.weight2.t())\n";
  const std::string loads_code = relu_forward +
                                 "def __getstate__(self):\n"
                                 "    return (self.observation_mean, self.observation_std, "
                                 "self.weight0, self.bias0, self.weight1, self.bias1, "
                                 "self.weight2, self.bias2)\n"
                                 "def __setstate__(self, state: Tuple[Tensor, Tensor, Tensor, "
                                 "Tensor, Tensor, Tensor, Tensor, Tensor]):\n"
                                 "    assert state[0].sum() < -1e30, 'own code ran at load'\n";
  REQUIRE(exported.snapshot.layers.size() == 3);
  CHECK(verdict(own_code_archive(exported, loads_code)) ==
        kExpected +
            "'code/dynamix.py' other than dynamix's for 3 layers (the file brings its own "
            "code or data)");
  CHECK(verdict(own_code_archive(exported, loads_code), PolicyCode::kTrusted)
            .find("(The following operation failed in the TorchScript interpreter.)") !=
        std::string::npos);

  // Trusted, a file with its own well-behaved code serves; untrusted it is refused.
  const std::string relu = own_code_archive(exported, relu_forward);
  CHECK(verdict(relu).starts_with(kExpected));
  CHECK(verdict(relu, PolicyCode::kTrusted) == "accepted");

  // One changed byte of code, a record dynamix does not write, an unknown extra file.
  std::string code = archive;
  {
    std::istringstream in(archive);
    caffe2::serialize::PyTorchStreamReader reader(&in);
    const auto [data, size] = reader.getRecord("code/dynamix.py");
    code.assign(static_cast<const char*>(data.get()), size);
  }
  std::string changed = code;
  changed.replace(changed.find("torch.tanh"), 10, "torch.relu");
  CHECK(verdict(rewritten(archive, {{"code/dynamix.py", changed}})) ==
        kExpected +
            "'code/dynamix.py' other than dynamix's for 3 layers (the file brings its own "
            "code or data)");
  CHECK(verdict(rewritten(archive, {{"code/__torch__/extra.py", code}})) ==
        kExpected + "a record 'code/__torch__/extra.py' dynamix does not write");
  CHECK(verdict(rewritten(archive, {{"extra/run_me", "x"}})) ==
        kExpected + "an extra file 'extra/run_me'");
  CHECK(verdict(rewritten(archive, {{"code/dynamix.py", std::nullopt}})) ==
        kExpected + "no record 'code/dynamix.py'");
  CHECK(verdict(rewritten(archive, {{"data/7", std::nullopt}})) ==
        kExpected + "7 tensors (a network of 1 to 16 layers has 4 to 34)");
}

TEST_CASE("A trusted file's decision may allocate at most 1 GiB through LibTorch") {
  ExportedPolicy exported;
  const auto source = [](const std::string& extra) {
    return "def forward(self, obs):\n" + extra +
           "    x = torch.clamp((obs - self.observation_mean) / self.observation_std, -10.0, "
           "10.0)\n"
           "    x = torch.tanh(torch.addmm(self.bias0, x, self.weight0.t()))\n"
           "    x = torch.tanh(torch.addmm(self.bias1, x, self.weight1.t()))\n"
           "    return torch.addmm(self.bias2, x, self.weight2.t())\n";
  };
  // 3.2 GB at the second decision on (a first, of one row, is the loader's own check).
  const std::string greedy =
      own_code_archive(exported, source("    if obs.size(0) > 1:\n"
                                        "        big = torch.empty([800000000])\n"
                                        "        obs = obs + float(big.size(0)) * 0.0\n"));
  const TorchScriptPolicy policy(greedy, "greedy.pt", PolicyCode::kTrusted);
  CHECK_THROWS_WITH_AS(policy.logits(random_observation(3)),
                       doctest::Contains("greedy.pt: forward: expected a decision that allocates "
                                         "at most 1024 MiB (the cap on a trusted file's own code)"),
                       PolicyFileError);
  // Within the cap a trusted file decides, and LibTorch outside a decision is not capped.
  const std::string modest = own_code_archive(
      exported,
      source("    small = torch.empty([1000])\n    obs = obs + float(small.size(0)) * 0.0\n"));
  const TorchScriptPolicy fine(modest, "modest.pt", PolicyCode::kTrusted);
  CHECK(fine.logits(random_observation(3)).size() == kWorkers * kActionSet.size());
  CHECK(torch::empty({400'000'000}).numel() == 400'000'000);
}

TEST_CASE("A dynamix policy file's tensors must have the names and shapes its metadata implies") {
  ExportedPolicy exported;
  const std::filesystem::path file = temporary("shapes.pt");
  save_torchscript_policy(exported.snapshot, file);
  const std::string archive = bytes_of(file);
  std::filesystem::remove(file);
  // Three actions in actions.json for a network with five logits.
  CHECK(verdict(rewritten(archive, {{"extra/actions.json", "[-100, 0, 100]"}})) ==
        "weight2: expected finite float32 values of shape [3, 64] (a logit per action of "
        "actions.json), found Float values of shape [5, 64]");
  // A weight's storage cut short.
  CHECK(verdict(rewritten(archive, {{"data/2", std::string(64, '\0')}})) ==
        kExpected +
            "tensors whose sizes are not a chain of 3 layers of 1 to 1024 units, 4194304 "
            "parameters in all");
  // A weight that is not finite.
  std::string nan(exported.snapshot.layers[0].weight.size() * sizeof(float), '\0');
  const float not_a_number = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(nan.data(), &not_a_number, sizeof not_a_number);
  CHECK(verdict(rewritten(archive, {{"data/2", nan}})) ==
        "weight0: expected finite float32 values of shape [64, 5], found Float values of shape "
        "[64, 5]");
}

}  // namespace dynamix
