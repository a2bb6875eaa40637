// The process-wide thread pools LibTorch's math runs on, owned by the program that links it.
#pragma once

namespace dynamix {

/// Sets LibTorch's intra-op threads and OpenBLAS's, both process-wide. The program decides,
/// once, at its start (the dynamix command, the benchmarks); no learner or policy constructor
/// changes them. One thread is fastest for the few 64-wide layers here; results are the same
/// bytes whatever the count.
void set_torch_threads(int threads);

/// LibTorch's intra-op thread count now.
int torch_threads();

}  // namespace dynamix
