// SPDX-License-Identifier: Apache-2.0
// Built with -mavx2 -mfma: a host target with FMA instructions, where gcc
// contracts a product and a following add into one fma across inlined calls
// (its default -ffp-contract=fast). The deterministic tree must still add each
// product rounded on its own, as the GPU does, so a dot product gives the bits
// of the tree over the rounded products; and mul_rn/add_rn stay two roundings.
#include <fusekit/fusekit.hpp>

#include "common/pinned_sums.hpp"
#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <iterator>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::reduce_algorithm;

#if !defined(__FMA__)
#error "this test is built with -mfma"
#endif

template <class T>
auto bits(T v) {
  std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t> b;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

bool cpu_has_fma() { return __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2"); }

template <class T>
void check_dot(std::size_t n, std::uint32_t seed) {
  auto const a = fusekit::test::signed_values<T>(n, seed);
  auto const b = fusekit::test::signed_values<T>(n, seed + 1);
  std::vector<T> products(n);
  for (std::size_t i = 0; i < n; ++i) { products[i] = a[i] * b[i]; }  // stored: rounded once each
  T const want = fusekit::sum(fusekit::cpu{}, span<const T>(products), reduce_algorithm::deterministic);
  T const got = fusekit::transform_reduce(fusekit::cpu{}, fusekit::weigh{}, span<const T>(a), span<const T>(b));
  EXPECT_EQ(bits(got), bits(want)) << "n=" << n << " got " << got << " want " << want;
}

TEST(DeterministicUnderFma, DotProductAddsRoundedProducts) {
  if (!cpu_has_fma()) { GTEST_SKIP() << "this CPU has no FMA instructions"; }
  for (std::size_t n : {1000, 8192, 100003}) {
    check_dot<float>(n, 3);
    check_dot<double>(n, 5);
  }
}

TEST(DeterministicUnderFma, MulRnAddRnAreTwoRoundings) {
  if (!cpu_has_fma()) { GTEST_SKIP() << "this CPU has no FMA instructions"; }
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the product rounds to 1 + 2^-11 (a tie, to even),
  // so adding -(1 + 2^-11) gives 0 with two roundings and 2^-24 with one.
  volatile float x = 1.0f + 0x1p-12f;
  volatile float c = -(1.0f + 0x1p-11f);
  EXPECT_EQ(fusekit::add_rn(fusekit::mul_rn(float(x), float(x)), float(c)), 0.0f);
  EXPECT_EQ(std::fma(float(x), float(x), float(c)), 0x1p-24f);
}

// The bits of the pinned sums (tests/common/pinned_sums.hpp), recorded before
// the tree was vectorized: every build variant of this file must give them.
TEST(DeterministicUnderFma, PinnedBitsOfEveryType) {
  std::vector<std::string> const got = fusekit::test::pinned::results();
  ASSERT_EQ(got.size(), std::size(fusekit::test::pinned::recorded));
  for (std::size_t k = 0; k < got.size(); ++k) { EXPECT_EQ(got[k], fusekit::test::pinned::recorded[k]); }
}

}  // namespace
