// SPDX-License-Identifier: Apache-2.0
// Must not compile: a 32-bit integer accumulator would wrap after a few
// billion (4 · 2^30 ones sum to 0); transform_reduce_sum says which to use.
#include <fusekit/fusekit.hpp>

#include <cstdint>

void count_into_int32(::cuda::std::span<const std::uint8_t> grey, std::int32_t* out) {
  fusekit::transform_reduce_sum(
      fusekit::cpu{}, out, fusekit::reduce_algorithm::deterministic,
      [](std::uint8_t g) { return static_cast<std::int64_t>(g); }, grey);
}
