// SPDX-License-Identifier: Apache-2.0
// Must not compile: weigh is binary, so this composition takes 2 inputs and
// the call gives 1. The error names both counts and nothing follows it.
#include <fusekit/fusekit.hpp>

void one_input(::cuda::std::span<float> out, ::cuda::std::span<const float> a) {
  fusekit::transform(fusekit::cpu{}, out, fusekit::fuse(fusekit::weigh{}, fusekit::tanh_activate{}), a);
}
