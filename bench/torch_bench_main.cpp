// The main of the benchmarks that run LibTorch: one thread, as the dynamix command runs policies.
#include <benchmark/benchmark.h>

#include "policies/export/torch_threads.h"

int main(int argc, char** argv) {
  dynamix::set_torch_threads(1);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
