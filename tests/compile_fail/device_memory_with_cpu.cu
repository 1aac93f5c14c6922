// SPDX-License-Identifier: Apache-2.0
// Must not compile: a thrust::device_vector holds device memory, which
// fusekit::cpu cannot read; the error says what to use instead. (The other
// way round is host_container_with_cuda.cu.)
#include <fusekit/fusekit.cuh>

#include <thrust/device_vector.h>

float device_vector_on_the_cpu(const thrust::device_vector<float>& x) { return fusekit::sum(fusekit::cpu{}, x); }
