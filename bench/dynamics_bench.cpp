// Cost of one iteration of the training dynamics with the noise-free loss and B_noise read as the
// dynamics fit's replay reads them: once per logged iteration, for every run and evaluation.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "sim/training/dynamics.h"
#include "sim/training/workload.h"

namespace dynamix {
namespace {

void BM_TrainingDynamicsStep(benchmark::State& state) {
  const auto workers = static_cast<std::size_t>(state.range(0));
  const Workload workload = WorkloadCatalog::builtin().at("resnet18-cifar10");
  const std::vector<int> batches(workers, 64);
  std::vector<double> std_norm(workers);
  std::vector<double> var_norm(workers);
  auto dynamics = std::make_unique<TrainingDynamics>(workload, TrainingOptions{}, workers, 1);
  std::int64_t iterations = 0;
  for (auto _ : state) {
    // A finished run holds its loss still; start again so that every step moves along the curve.
    if (dynamics->progress() >= 1.0) {
      dynamics = std::make_unique<TrainingDynamics>(workload, TrainingOptions{}, workers, 1);
    }
    benchmark::DoNotOptimize(dynamics->train_loss() + dynamics->noise_scale());
    benchmark::DoNotOptimize(dynamics->step(batches, std_norm, var_norm));
    ++iterations;
  }
  state.counters["iterations_per_s"] =
      benchmark::Counter(static_cast<double>(iterations), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TrainingDynamicsStep)->Arg(1)->Arg(64)->ArgName("workers");

}  // namespace
}  // namespace dynamix
