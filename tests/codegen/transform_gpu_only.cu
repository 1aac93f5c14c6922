// SPDX-License-Identifier: Apache-2.0
// A translation unit that calls only the GPU's transform
// (codegen.gpu_calls_parse_no_cpu_backend): <fusekit/elementwise.cuh> brings
// the GPU's backend and not the CPU's threads.
#include <fusekit/elementwise.cuh>

#include <cuda/std/span>

void layer(cudaStream_t stream, cuda::std::span<const float> x, cuda::std::span<float> y) {
  fusekit::transform(fusekit::cuda{stream}, y, fusekit::tanh_activate{}, x);
}
