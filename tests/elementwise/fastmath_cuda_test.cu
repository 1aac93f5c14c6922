// SPDX-License-Identifier: Apache-2.0
// Built with nvcc --use_fast_math (approximate division and square root,
// subnormals flushed to zero): tanh_activate within the bound functors.hpp
// states for it, NaN still NaN, and the finiteness check fit relies on still
// counts NaN and inf (it works on the bits, which no flag folds).
#include <fusekit/fusekit.cuh>

#include "common/device_buffer.cuh"
#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::test::device_buffer;

float float_from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

TEST(UseFastMathGpu, TanhWithinItsFastMathBound) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::vector<float> x;
  for (std::uint64_t b = 0x00800000u; b <= 0x7f7fffffu; b += 997) {  // every 997th normal positive float
    float const v = float_from_bits(static_cast<std::uint32_t>(b));
    x.push_back(v);
    x.push_back(-v);
  }
  device_buffer<float> dx(x), dy(x.size());
  fusekit::transform(fusekit::cuda{}, dy.view(), fusekit::tanh_activate{}, dx.cview());
  auto const y = dy.to_host();
  double worst = 0;
  float worst_x = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double const e = fusekit::test::ulp_error(y[i], tanhl(static_cast<long double>(x[i])));
    if (e > worst) {
      worst = e;
      worst_x = x[i];
    }
  }
  EXPECT_LE(worst, fusekit::tanh_float_max_ulp_use_fast_math) << "at x = " << worst_x;
}

TEST(UseFastMathGpu, NaNStaysNaNAndNonFiniteValuesAreCounted) {
  FUSEKIT_REQUIRE_CUDA_DEVICE();
  std::vector<float> x(1000, 0.25f);
  x[10] = NAN;
  x[20] = INFINITY;
  x[30] = -INFINITY;
  device_buffer<float> dx(x), dy(x.size());
  fusekit::transform(fusekit::cuda{}, dy.view(), fusekit::tanh_activate{}, dx.cview());
  auto const y = dy.to_host();
  EXPECT_TRUE(fusekit::test::is_nan(y[10]));
  EXPECT_EQ(y[20], 1.0f);
  EXPECT_EQ(y[30], -1.0f);
  std::int64_t const bad = fusekit::transform_reduce(fusekit::cuda{}, fusekit::reduce_algorithm::deterministic,
                                                     fusekit::accumulate_in<std::int64_t>{},
                                                     fusekit::detail::count_non_finite{}, dx.cview());
  EXPECT_EQ(bad, 3);
}

}  // namespace
