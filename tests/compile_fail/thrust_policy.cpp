// SPDX-License-Identifier: Apache-2.0
// Must not compile: a Thrust execution policy is not a fusekit policy; the
// error says which to use.
#include <fusekit/fusekit.hpp>
#include <thrust/execution_policy.h>

float thrust_policy(::cuda::std::span<const float> in) { return fusekit::sum(thrust::host, in); }
