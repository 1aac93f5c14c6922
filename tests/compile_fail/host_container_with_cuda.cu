// SPDX-License-Identifier: Apache-2.0
// Must not compile: a std::vector holds host memory, and fusekit::cuda reads
// device memory only (it compiles no staging); the error names
// fusekit::cuda_staged, which copies host memory in pipelined chunks.
#include <fusekit/fusekit.cuh>

#include <vector>

float host_vector_on_the_gpu(const std::vector<float>& x) { return fusekit::sum(fusekit::cuda{}, x); }
