// Compute anchors: the GPU catalog against published single-GPU training throughput.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "sim/cluster/compute.h"
#include "sim/cluster/gpu_catalog.h"

namespace dynamix {
namespace {

struct ThroughputAnchor {
  const char* gpu;
  int batch;
  double published_samples_per_s;
  /// Allowed relative deviation of the simulated throughput.
  double tolerance;
  const char* source;
};

/// ResNet-50 v1.5 on ImageNet 224²: 25.6M parameters, 4.1 G multiply-adds forward (He et al.
/// 2016, Table 1; torchvision's model table), ×3 for forward + backward.
ModelCost resnet50() {
  ModelCost cost;
  cost.parameters = 25.6e6;
  cost.flops_per_sample = 3 * 4.1e9;
  return cost;
}

constexpr ThroughputAnchor kResNet50Anchors[] = {
    {"V100", 256, 1200, 0.15,
     "NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5 README, DGX-1 16GB, 1 GPU, mixed "
     "precision, pytorch-21.03"},
    {"V100", 256, 1270, 0.15,
     "NVIDIA DeepLearningExamples TensorFlow ResNet50 v1.5 README, DGX-1 V100 16G, 1 GPU, "
     "mixed precision + XLA, 20.06-tf1"},
    {"V100-32GB", 256, 1156, 0.15,
     "NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5 README, DGX-1 32GB, 1 GPU, mixed "
     "precision, pytorch-21.03"},
    {"A100-80GB", 256, 2470, 0.15,
     "NVIDIA DeepLearningExamples PyTorch ResNet50 v1.5 README, DGX A100 80GB, 1 GPU, mixed "
     "precision, pytorch-21.03"},
    {"A100", 256, 2375, 0.15,
     "NVIDIA DeepLearningExamples TensorFlow ResNet50 v1.5 README, DGX A100 40GB, 1 GPU, "
     "mixed precision + XLA, 20.06-tf1"},
};

double simulated_samples_per_s(const GpuCatalog& catalog, const char* gpu, int batch) {
  const GpuSpec* spec = catalog.find(gpu);
  REQUIRE(spec != nullptr);
  return batch / compute_seconds(worker_node("anchor", *spec), resnet50(), batch);
}

TEST_CASE("ResNet-50 mixed-precision training throughput matches published single-GPU figures") {
  const GpuCatalog catalog = GpuCatalog::builtin();
  for (const ThroughputAnchor& anchor : kResNet50Anchors) {
    CAPTURE(anchor.source);
    const double simulated = simulated_samples_per_s(catalog, anchor.gpu, anchor.batch);
    MESSAGE(std::string(anchor.gpu)
            << " batch " << anchor.batch << ": published " << anchor.published_samples_per_s
            << " img/s, simulated " << simulated);
    CHECK(std::abs(simulated / anchor.published_samples_per_s - 1) <= anchor.tolerance);
  }
}

TEST_CASE("The A100 to V100 ResNet-50 speedup matches the published one") {
  // DeepLearningExamples PyTorch, same container (21.03): 2470 / 1200 img/s.
  constexpr double kPublishedSpeedup = 2470.0 / 1200.0;
  constexpr double kTolerance = 0.10;
  const GpuCatalog catalog = GpuCatalog::builtin();
  const double speedup = simulated_samples_per_s(catalog, "A100-80GB", 256) /
                         simulated_samples_per_s(catalog, "V100", 256);
  MESSAGE("A100/V100 speedup: published " << kPublishedSpeedup << ", simulated " << speedup);
  CHECK(std::abs(speedup / kPublishedSpeedup - 1) <= kTolerance);
}

}  // namespace
}  // namespace dynamix
