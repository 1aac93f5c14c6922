// SPDX-License-Identifier: Apache-2.0
// Must not compile: fusekit::cuda from a file g++ compiles has no GPU backend;
// the error says to include fusekit.cuh and compile with nvcc.
#include <fusekit/fusekit.hpp>

void gpu_from_cpp(::cuda::std::span<float> out, ::cuda::std::span<const float> in) {
  fusekit::transform(fusekit::cuda{}, out, fusekit::tanh_activate{}, in);
}
