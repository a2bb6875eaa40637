// set_torch_threads: LibTorch's intra-op pool and OpenBLAS's.
#include "policies/export/torch_threads.h"

#include <ATen/Parallel.h>

#include "sim/core/check.h"

extern "C" void openblas_set_num_threads(int threads);

namespace dynamix {

void set_torch_threads(int threads) {
  DYNAMIX_CHECK(threads >= 1, threads << " LibTorch threads");
  at::set_num_threads(threads);
  openblas_set_num_threads(threads);
}

int torch_threads() { return at::get_num_threads(); }

}  // namespace dynamix
