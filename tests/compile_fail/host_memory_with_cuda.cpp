// SPDX-License-Identifier: Apache-2.0
// Must not compile: a std::vector holds host memory and fusekit::cuda reads
// device memory; the error says what to use instead.
#include <fusekit/fusekit.hpp>

#include <vector>

float host_vector_on_the_gpu(const std::vector<float>& x) { return fusekit::sum(fusekit::cuda{}, x); }
