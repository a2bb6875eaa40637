// torch_kernels: OpenBLAS's core name and ATen's CPU capability, read back.
#include "policies/export/torch_kernels.h"

#include <ATen/Parallel.h>
#include <ATen/Version.h>

#include <sstream>

extern "C" char* openblas_get_corename();

namespace dynamix {
namespace {

/// ATen names the capability it dispatches to only in its build summary.
std::string aten_capability() {
  constexpr std::string_view kPrefix = "CPU capability usage: ";
  std::istringstream config(at::show_config());
  for (std::string line; std::getline(config, line);) {
    const std::size_t at = line.find(kPrefix);
    if (at != std::string::npos) return line.substr(at + kPrefix.size());
  }
  return "unknown";
}

}  // namespace

TorchKernels torch_kernels() {
  return {.blas_core = openblas_get_corename(),
          .aten_capability = aten_capability(),
          .threads = at::get_num_threads()};
}

}  // namespace dynamix
