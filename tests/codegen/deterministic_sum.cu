// SPDX-License-Identifier: Apache-2.0
// Compiled to PTX by check_tree_ptx.cmake: in the deterministic tree's kernels
// every floating-point addition carries an explicit rounding mode (add.rn),
// which ptxas never fuses with the product an op returns, so a dot product
// sums to the same bits as on the CPU; and no fma appears in them.
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
