// Compute anchors: published single-GPU ResNet-50 training throughput, run through the path
// `dynamix simulate` takes (a scenario, its memory check, a TrainingRun), each marked as fitted
// (the catalog's constant was fitted to it) or predicted (held out of every fit).
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "sim/scenario/training_run.h"
#include "tests/fixtures.h"

namespace dynamix {
namespace {

/// The shipped catalog's ResNet-50 (catalog/workloads.yaml, resnet50-imagenet) on one GPU, as
/// `dynamix simulate` loads it: no workload is redefined here.
const std::string kResNet50Scenario =
    "topology:\n"
    "  nodes: [{name: gpu, gpu: V100, cpu_cores: 8}]\n"
    "training:\n"
    "  workload: resnet50-imagenet\n"
    "  precision: mixed\n"
    "variability: {gpu_spread: 0, outlier_probability: 0, jitter_sigma: 0, "
    "straggler_rate_per_hour: 0}\n";

struct ThroughputAnchor {
  const char* gpu;
  double published_samples_per_s;
  /// Allowed relative deviation of the simulated throughput.
  double tolerance;
  /// Whether the catalog's max_efficiency was fitted to this figure.
  bool fitted;
  const char* source;
};

constexpr ThroughputAnchor kResNet50Anchors[] = {
    {"V100", 1200, 0.10, true,
     "NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5 README, DGX-1 16GB, 1 GPU, mixed "
     "precision, pytorch-21.03"},
    {"V100", 1270, 0.10, true,
     "NVIDIA DeepLearningExamples TensorFlow ResNet50 v1.5 README, DGX-1 V100 16G, 1 GPU, "
     "mixed precision + XLA, 20.06-tf1"},
    {"V100-32GB", 1156, 0.10, false,
     "NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5 README, DGX-1 32GB, 1 GPU, mixed "
     "precision, pytorch-21.03"},
    {"A100-80GB", 2470, 0.10, true,
     "NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5 README, DGX A100 80GB, 1 GPU, mixed "
     "precision, pytorch-21.03"},
    {"A100", 2375, 0.10, true,
     "NVIDIA DeepLearningExamples TensorFlow ResNet50 v1.5 README, DGX A100 40GB, 1 GPU, "
     "mixed precision + XLA, 20.06-tf1"},
};

/// Samples per second of one iteration at the published per-GPU batch 256, on the simulate
/// path: the scenario is loaded and checked, the batch must pass the memory check.
double simulated_samples_per_s(const char* gpu) {
  const testing::TempDirectory dir;
  const Scenario scenario = load_scenario(dir.write("resnet50.yaml", kResNet50Scenario),
                                          {std::string("topology.nodes.0.gpu=") + gpu});
  TrainingRun run(scenario, 1);
  REQUIRE(run.max_batch(0) >= 256);
  const std::vector<int> batch = {256};
  return 256 / run.step(batch).workers[0].compute_s;
}

TEST_CASE("ResNet-50 mixed-precision training throughput matches published single-GPU figures") {
  for (const ThroughputAnchor& anchor : kResNet50Anchors) {
    CAPTURE(anchor.source);
    const double simulated = simulated_samples_per_s(anchor.gpu);
    MESSAGE((std::string(anchor.gpu) + (anchor.fitted ? " (fitted)" : " (predicted)"))
            << ": published " << anchor.published_samples_per_s << " img/s, simulated "
            << simulated);
    CHECK(std::abs(simulated / anchor.published_samples_per_s - 1) <= anchor.tolerance);
  }
}

TEST_CASE("the published batch 256 needs mixed precision on a 16 GB V100") {
  const testing::TempDirectory dir;
  const std::string path = dir.write("resnet50.yaml", kResNet50Scenario);
  const Scenario fp32 = load_scenario(path, {"training.precision=fp32"});
  const Scenario mixed = load_scenario(path);
  CHECK(TrainingRun(fp32, 1).max_batch(0) < 256);
  CHECK(TrainingRun(mixed, 1).max_batch(0) >= 256);
}

TEST_CASE("The A100 to V100 ResNet-50 speedup matches the published one") {
  // DeepLearningExamples PyTorch, same container (21.03): 2470 / 1200 img/s. Both ends are
  // fitted figures, so this checks the fits agree, not a prediction.
  constexpr double kPublishedSpeedup = 2470.0 / 1200.0;
  constexpr double kTolerance = 0.10;
  const double speedup = simulated_samples_per_s("A100-80GB") / simulated_samples_per_s("V100");
  MESSAGE("A100/V100 speedup: published " << kPublishedSpeedup << ", simulated " << speedup);
  CHECK(std::abs(speedup / kPublishedSpeedup - 1) <= kTolerance);
}

}  // namespace
}  // namespace dynamix
