// Which CPU kernels LibTorch's math runs on in this process, as the libraries report them.
#pragma once

#include <string>

namespace dynamix {

/// The kernels the libraries chose as they loaded (apps/portable_kernels.h pins them).
struct TorchKernels {
  /// OpenBLAS's kernel family: "Prescott" when pinned, else the CPU's ("Haswell", "Zen", ...).
  std::string blas_core;
  /// ATen's vector kernels as it names them: "NO AVX" (the x86-64 baseline), "AVX2", "AVX512".
  std::string aten_capability;
  /// LibTorch's intra-op threads.
  int threads = 0;
};

/// The kernels in effect now.
TorchKernels torch_kernels();

}  // namespace dynamix
