// SPDX-License-Identifier: Apache-2.0
// tanh_activate's float bound (tanh_float_max_ulp) through the CPU backend's
// SIMD loop and its AVX2 clone, as `transform` runs it, against a long-double
// tanh, for every float of the intervals where the error peaks: around the
// branch at 0.55 (0.45 to 1.25) and where tanh rounds to 1 (8.5 to 10.5).
// ctest builds this file with the flags users choose: the defaults,
// -ffast-math, -O2 -ffast-math and -O3 -march=native -ffast-math. Under
// -ffast-math gcc used to turn the vector division into an approximate
// reciprocal (2.2 ulp near 0.562), which the scalar sweeps of functors_test
// never see. The full sweep of every non-negative float below 10 is the
// disabled test, which scripts/tools/tanh_sweep.sh runs under each flag set.
#include <fusekit/fusekit.hpp>

#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

std::uint32_t bits_of(float x) { return fusekit::detail::bit_cast<std::uint32_t>(x); }

struct sweep_result {
  double worst_ulp = 0;
  float worst_x = 0;
  std::uint64_t checked = 0;
};

// Every float with bits in [first, last), through transform, in blocks.
sweep_result sweep(std::uint32_t first, std::uint32_t last, const fusekit::cpu& policy) {
  sweep_result r;
  std::uint32_t const block = 1u << 20;
  std::vector<float> x(block), y(block);
  for (std::uint32_t b = first; b < last; b += block) {
    std::uint32_t const n = last - b < block ? last - b : block;
    for (std::uint32_t i = 0; i < n; ++i) { x[i] = fusekit::detail::bit_cast<float>(b + i); }
    fusekit::transform(policy, ::cuda::std::span<float>(y.data(), n), fusekit::tanh_activate{},
                       ::cuda::std::span<const float>(x.data(), n));
    for (std::uint32_t i = 0; i < n; ++i) {
      double const e = fusekit::test::ulp_error(y[i], tanhl(static_cast<long double>(x[i])));
      if (e > r.worst_ulp) {
        r.worst_ulp = e;
        r.worst_x = x[i];
      }
    }
    r.checked += n;
  }
  return r;
}

TEST(TanhSweep, EveryFloatOfTheRiskyIntervalsThroughTheSimdLoop) {
  for (int threads : {0, 1}) {
    fusekit::cpu const policy{threads};
    sweep_result const branch = sweep(bits_of(0.45f), bits_of(1.25f), policy);
    EXPECT_GT(branch.checked, 10000000u);
    EXPECT_LE(branch.worst_ulp, fusekit::tanh_float_max_ulp) << "at x = " << branch.worst_x;
    sweep_result const one = sweep(bits_of(8.5f), bits_of(10.5f), policy);
    EXPECT_LE(one.worst_ulp, fusekit::tanh_float_max_ulp) << "at x = " << one.worst_x;
  }
}

// Every non-negative normal float below 10 (about 1.09·10^9 values): run by
// scripts/tools/tanh_sweep.sh, or
//   ./tanh_sweep_test --gtest_also_run_disabled_tests --gtest_filter='*Full*'
TEST(TanhSweep, DISABLED_FullNonNegativeRange) {
  sweep_result const r = sweep(bits_of(1.17549435e-38f), bits_of(10.0f), fusekit::cpu{});
  std::printf("tanh sweep: %llu floats, worst %.3f ulp at x = %.9g\n", static_cast<unsigned long long>(r.checked),
              r.worst_ulp, static_cast<double>(r.worst_x));
  EXPECT_LE(r.worst_ulp, fusekit::tanh_float_max_ulp) << "at x = " << r.worst_x;
}

}  // namespace
