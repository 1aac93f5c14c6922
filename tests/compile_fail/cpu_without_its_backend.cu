// SPDX-License-Identifier: Apache-2.0
// Must not compile: <fusekit/reduce.cuh> holds the GPU's backend only; the
// error names the header that adds the CPU's, <fusekit/reduce.hpp>.
#include <fusekit/reduce.cuh>

#include <cuda/std/span>

float cpu_sum_with_the_gpu_header(cuda::std::span<const float> x) { return fusekit::sum(fusekit::cpu{}, x); }
