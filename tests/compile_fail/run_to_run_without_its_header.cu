// SPDX-License-Identifier: Apache-2.0
// Must not compile: run_to_run on the GPU is CUB's DeviceReduce, which
// <fusekit/reduce.cuh> does not bring (a translation unit that takes the
// other algorithms parses no CUB device header); the error names the header
// that does, <fusekit/run_to_run.cuh>.
#include <fusekit/reduce.cuh>

#include <cuda/std/span>

float run_to_run_on_the_gpu(cuda::std::span<const float> x) {
  return fusekit::sum(fusekit::cuda{}, x, fusekit::run_to_run{});
}
