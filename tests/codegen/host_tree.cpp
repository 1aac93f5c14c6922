// SPDX-License-Identifier: Apache-2.0
// Compiled as an object file under the flags users choose (default, -ffast-math,
// -mavx2 -mfma, -march=native) and inspected by check_host_tree.cmake: the
// deterministic tree's column pass, its integer tiles' exact sums and its
// pairwise steps over arrays are vector code (packed adds on 32-byte registers
// in their AVX2 clone) with no fused multiply-add, for every type the sums take. That the additions keep their
// order (no reassociation) is what the pinned bits test
// (DeterministicTree.PinnedBitsOfEveryType) checks under the same flags.
#include <fusekit/fusekit.hpp>

#include <cstdint>

using ::cuda::std::span;

float sum_f32(span<const float> x) { return fusekit::sum(fusekit::cpu{}, x); }
double sum_f64(span<const double> x) { return fusekit::sum(fusekit::cpu{}, x); }
double sum_f32_in_f64(span<const float> x) {
  return fusekit::sum(fusekit::cpu{}, x, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<double>{});
}
std::int64_t sum_i32(span<const std::int32_t> x) { return fusekit::sum(fusekit::cpu{}, x); }
std::int64_t sum_i64(span<const std::int64_t> x) { return fusekit::sum(fusekit::cpu{}, x); }
std::uint64_t sum_u8(span<const std::uint8_t> x) { return fusekit::sum(fusekit::cpu{}, x); }
