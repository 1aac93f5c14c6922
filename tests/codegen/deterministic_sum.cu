// SPDX-License-Identifier: Apache-2.0
// Compiled to PTX by check_tree_ptx.cmake: in the deterministic tree's kernels
// every floating-point addition carries an explicit rounding mode (add.rn),
// which ptxas never fuses with the product an op returns, so a dot product
// sums to the same bits as on the CPU; and no fma appears in them. Compiled to
// an sm_90 cubin too: every instantiation, integers included, stays within the
// tree kernel's register cap and spills nothing; check_tree_sass.py counts
// its loads in flight per thread.
#include <fusekit/fusekit.cuh>

void dot_float(::cuda::std::span<const float> a, ::cuda::std::span<const float> b, float* out) {
  fusekit::transform_reduce_sum(fusekit::cuda{}, out, fusekit::reduce_algorithm::deterministic, fusekit::weigh{}, a, b);
}

void dot_double(::cuda::std::span<const double> a, ::cuda::std::span<const double> b, double* out) {
  fusekit::transform_reduce_sum(fusekit::cuda{}, out, fusekit::reduce_algorithm::deterministic, fusekit::weigh{}, a, b);
}

void sum_float_in_double(::cuda::std::span<const float> a, double* out) {
  fusekit::reduce_sum(fusekit::cuda{}, a, out, fusekit::reduce_algorithm::deterministic);
}

void sum_int32_in_int64(::cuda::std::span<const std::int32_t> a, std::int64_t* out) {
  fusekit::reduce_sum(fusekit::cuda{}, a, out, fusekit::reduce_algorithm::deterministic);
}

void sum_int64(::cuda::std::span<const std::int64_t> a, std::int64_t* out) {
  fusekit::reduce_sum(fusekit::cuda{}, a, out, fusekit::reduce_algorithm::deterministic);
}

void min_float(::cuda::std::span<const float> a, float* out) {
  fusekit::reduce(fusekit::cuda{}, a, out, fusekit::minimum{}, 1e30f, fusekit::reduce_algorithm::deterministic);
}

void max_double(::cuda::std::span<const double> a, double* out) {
  fusekit::reduce(fusekit::cuda{}, a, out, fusekit::maximum{}, -1e300, fusekit::reduce_algorithm::deterministic);
}

void sum_uint8_in_uint64(::cuda::std::span<const std::uint8_t> a, std::uint64_t* out) {
  fusekit::reduce_sum(fusekit::cuda{}, a, out, fusekit::reduce_algorithm::deterministic);
}
