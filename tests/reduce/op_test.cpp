// SPDX-License-Identifier: Apache-2.0
// `reduce` with an operation: min and max (exact, so every algorithm and
// every backend gives the same value), a caller's operation, the sum as one
// instance (bit for bit reduce_sum's), init, and the algorithms an operation
// without an atomic may not use.
#include <fusekit/fusekit.hpp>

#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::reduce_algorithm;
using fusekit::test::signed_values;

// Sizes around the tree's tiles and levels, and random ones.
std::vector<std::size_t> sizes() {
  std::vector<std::size_t> s = {1, 2, 255, 256, 257, 8191, 8192, 8193, 16384, 8192 * 3 + 17, 200003};
  std::mt19937 gen(5);
  for (int i = 0; i < 6; ++i) { s.push_back(std::uniform_int_distribution<std::size_t>(1, 70000)(gen)); }
  return s;
}

TEST(Reduce, MinAndMaxOfFloatsAreExactWithCubAndTheTree) {
  for (std::size_t n : sizes()) {
    auto x = signed_values<float>(n, static_cast<std::uint32_t>(n));
    float const lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
    for (auto a : {reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
      float mn = 0, mx = 0;
      fusekit::reduce(fusekit::cpu{}, span<const float>(x), &mn, fusekit::minimum{}, INFINITY, a);
      fusekit::reduce(fusekit::cpu{2}, span<const float>(x), &mx, fusekit::maximum{}, -INFINITY, a);
      EXPECT_EQ(mn, lo) << "n=" << n << " " << fusekit::to_string(a);
      EXPECT_EQ(mx, hi) << "n=" << n << " " << fusekit::to_string(a);
    }
  }
}

TEST(Reduce, IntegerMinAndMaxRunOnEveryAlgorithm) {
  std::mt19937 gen(3);
  std::vector<std::int32_t> x(100000);
  for (auto& v : x) { v = std::uniform_int_distribution<std::int32_t>(-1000000, 1000000)(gen); }
  for (auto a : fusekit::all_reduce_algorithms) {
    std::int32_t mn = 0;
    std::int64_t mx = 0;
    fusekit::reduce(fusekit::cpu{}, span<const std::int32_t>(x), &mn, fusekit::minimum{}, std::int32_t{0}, a);
    fusekit::reduce(fusekit::cpu{}, span<const std::int32_t>(x), &mx, fusekit::maximum{},
                    std::numeric_limits<std::int64_t>::lowest(), a);
    EXPECT_EQ(mn, std::min(0, *std::min_element(x.begin(), x.end()))) << fusekit::to_string(a);
    EXPECT_EQ(mx, *std::max_element(x.begin(), x.end())) << fusekit::to_string(a);
  }
}

TEST(Reduce, InitIsCombinedOnceAndIsTheResultOfNoValues) {
  std::vector<float> const none;
  std::vector<std::int64_t> ones(10000, 1);
  for (auto a : fusekit::all_reduce_algorithms) {
    float m = 0;
    fusekit::reduce(
        fusekit::cpu{}, span<const float>(none), &m, fusekit::minimum{}, 42.0f,
        a == reduce_algorithm::naive_atomic || a == reduce_algorithm::block_atomic ? reduce_algorithm::run_to_run : a);
    EXPECT_EQ(m, 42.0f);
    std::int64_t s = 0;
    fusekit::reduce(fusekit::cpu{}, span<const std::int64_t>(ones), &s, fusekit::plus{}, std::int64_t{5}, a);
    EXPECT_EQ(s, 10005) << fusekit::to_string(a);
  }
}

TEST(Reduce, PlusIsTheSumBitForBit) {
  for (std::size_t n : sizes()) {
    auto const x = signed_values<float>(n, static_cast<std::uint32_t>(n + 1));
    float via_reduce = 0, via_sum = 0;
    fusekit::reduce(fusekit::cpu{}, span<const float>(x), &via_reduce, fusekit::plus{}, 0.0f);
    fusekit::reduce_sum(fusekit::cpu{}, span<const float>(x), &via_sum);
    EXPECT_EQ(fusekit::detail::bit_cast<std::uint32_t>(via_reduce), fusekit::detail::bit_cast<std::uint32_t>(via_sum))
        << "n=" << n;
  }
  // The sum of negative zeros is +0 (init +0 comes first), as reduce_sum's always was.
  std::vector<float> const zeros(300, -0.0f);
  float z = -1;
  fusekit::reduce(fusekit::cpu{}, span<const float>(zeros), &z, fusekit::plus{}, 0.0f);
  EXPECT_EQ(fusekit::detail::bit_cast<std::uint32_t>(z), 0u);
}

// A caller's operation: the value of largest magnitude, sign kept (exact,
// associative and commutative up to ties, which the data below avoid).
struct largest_magnitude {
  FUSEKIT_HD float operator()(float a, float b) const { return std::fabs(b) > std::fabs(a) ? b : a; }
};

TEST(Reduce, ACallersOperationThroughCubAndTheTree) {
  for (std::size_t n : sizes()) {
    std::vector<float> x(n);
    // (i · 7919) mod n is a permutation of 0 … n−1 (7919 is prime): no two magnitudes tie.
    for (std::size_t i = 0; i < n; ++i) { x[i] = static_cast<float>((i * 7919) % n) * (i % 2 ? -1.0f : 1.0f); }
    float want = 0;
    for (float v : x) { want = largest_magnitude{}(want, v); }
    for (auto a : {reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
      float got = 0;
      fusekit::reduce(fusekit::cpu{}, span<const float>(x), &got, largest_magnitude{}, 0.0f, a);
      EXPECT_EQ(got, want) << "n=" << n << " " << fusekit::to_string(a);
    }
  }
}

template <class T>
bool is_nan_bits(T x) {
  return fusekit::detail::is_nan(x);  // on the bits: this file is also read under -ffast-math
}

// A NaN anywhere gives NaN, wherever it sits and whatever init is: the
// result no longer depends on the NaN's place (a NaN in in[0] used to give
// init and drop every other value; one later was dropped itself).
template <class T>
void nan_anywhere_gives_nan() {
  T const nan = std::numeric_limits<T>::quiet_NaN();
  for (std::size_t n : {std::size_t{3}, std::size_t{100}, std::size_t{100000}}) {
    for (std::size_t at : {std::size_t{0}, std::size_t{1}, n / 2, n - 1}) {
      std::vector<T> x(n);
      for (std::size_t i = 0; i < n; ++i) { x[i] = static_cast<T>(1 + i % 7); }
      x[at] = nan;
      for (auto a : {reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
        T lo = 0, hi = 0;
        fusekit::reduce(fusekit::cpu{}, span<const T>(x), &lo, fusekit::minimum{}, T(INFINITY), a);
        fusekit::reduce(fusekit::cpu{}, span<const T>(x), &hi, fusekit::maximum{}, T(-INFINITY), a);
        EXPECT_TRUE(is_nan_bits(lo) && is_nan_bits(hi)) << "n " << n << " at " << at << " " << fusekit::to_string(a);
      }
    }
    // NaN as init, and no NaN at all (then the exact extremes).
    std::vector<T> x(n);
    for (std::size_t i = 0; i < n; ++i) { x[i] = static_cast<T>(i % 11) - T(5); }
    for (auto a : {reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
      T lo = 0, hi = 0;
      fusekit::reduce(fusekit::cpu{}, span<const T>(x), &lo, fusekit::minimum{}, nan, a);
      EXPECT_TRUE(is_nan_bits(lo)) << n;
      fusekit::reduce(fusekit::cpu{}, span<const T>(x), &lo, fusekit::minimum{}, T(INFINITY), a);
      fusekit::reduce(fusekit::cpu{}, span<const T>(x), &hi, fusekit::maximum{}, T(-INFINITY), a);
      EXPECT_EQ(lo, *std::min_element(x.begin(), x.end()));
      EXPECT_EQ(hi, *std::max_element(x.begin(), x.end()));
    }
  }
}

TEST(Reduce, NanAnywhereGivesNanOnEveryAlgorithm) {
  nan_anywhere_gives_nan<float>();
  nan_anywhere_gives_nan<double>();
}

// +0 and −0 compare equal but differ in their bits: min picks −0 and max +0
// wherever they sit (IEEE 754-2019), so the result does not depend on order.
TEST(Reduce, SignedZerosMinIsNegativeMaxIsPositive) {
  auto const bits = [](float v) { return fusekit::detail::bit_cast<std::uint32_t>(v); };
  float const neg_zero = fusekit::detail::bit_cast<float>(0x80000000u);
  for (std::size_t n : {std::size_t{2}, std::size_t{300}, std::size_t{20000}}) {
    for (std::size_t at : {std::size_t{0}, n / 3, n - 1}) {
      std::vector<float> zeros(n, 0.0f), negative(n, neg_zero);
      zeros[at] = neg_zero;
      negative[at] = 0.0f;
      for (auto a : {reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
        float lo = 1, hi = 1;
        fusekit::reduce(fusekit::cpu{}, span<const float>(zeros), &lo, fusekit::minimum{}, 0.0f, a);
        fusekit::reduce(fusekit::cpu{}, span<const float>(negative), &hi, fusekit::maximum{}, neg_zero, a);
        EXPECT_EQ(bits(lo), 0x80000000u) << "n " << n << " at " << at << " " << fusekit::to_string(a);
        EXPECT_EQ(bits(hi), 0u) << "n " << n << " at " << at << " " << fusekit::to_string(a);
      }
    }
  }
}

// Integer extremes from the op's identity: max of all-negative data and min
// of all-positive data, with init the identity itself, so a partial that
// starts from 0 instead of the identity shows.
TEST(Reduce, IntegerExtremesStartFromTheIdentityOnEveryAlgorithm) {
  std::mt19937 gen(8);
  std::vector<std::int64_t> positive(100000), negative(100000);
  for (auto& v : positive) { v = std::uniform_int_distribution<std::int64_t>(5, 1000000)(gen); }
  for (auto& v : negative) { v = -std::uniform_int_distribution<std::int64_t>(5, 1000000)(gen); }
  for (auto a : fusekit::all_reduce_algorithms) {
    std::int64_t lo = 0, hi = 0;
    fusekit::reduce(fusekit::cpu{}, span<const std::int64_t>(positive), &lo, fusekit::minimum{},
                    std::numeric_limits<std::int64_t>::max(), a);
    fusekit::reduce(fusekit::cpu{}, span<const std::int64_t>(negative), &hi, fusekit::maximum{},
                    std::numeric_limits<std::int64_t>::lowest(), a);
    EXPECT_EQ(lo, *std::min_element(positive.begin(), positive.end())) << fusekit::to_string(a);
    EXPECT_EQ(hi, *std::max_element(negative.begin(), negative.end())) << fusekit::to_string(a);
  }
}

// An op at the contract's edge: commutative only through its tie rule (of two
// equal magnitudes, the positive one), with every magnitude tied. The tree
// reorders operands, so without the tie rule the result would depend on the
// order; with it, every algorithm gives the left fold's result.
struct largest_magnitude_ties_positive {
  FUSEKIT_HD float operator()(float a, float b) const {
    float const ma = a < 0 ? -a : a, mb = b < 0 ? -b : b;
    if (ma != mb) { return mb > ma ? b : a; }
    return a < b ? b : a;
  }
};

TEST(Reduce, AnOpCommutativeOnlyThroughItsTieRule) {
  for (std::size_t n : sizes()) {
    std::vector<float> x(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = static_cast<float>((i * 7919) % (n / 2 + 1)) * (i % 2 ? -1.0f : 1.0f);
    }
    float want = 0;
    for (float v : x) { want = largest_magnitude_ties_positive{}(want, v); }
    for (auto a : {reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
      float got = 0;
      fusekit::reduce(fusekit::cpu{}, span<const float>(x), &got, largest_magnitude_ties_positive{}, 0.0f, a);
      EXPECT_EQ(fusekit::detail::bit_cast<std::uint32_t>(got), fusekit::detail::bit_cast<std::uint32_t>(want))
          << "n=" << n << " " << fusekit::to_string(a);
    }
  }
}

TEST(Reduce, AtomicAlgorithmsNeedAnOperationWithAnAtomic) {
  std::vector<float> const x(10, 1.0f);
  float out = 0;
  for (auto a : {reduce_algorithm::naive_atomic, reduce_algorithm::block_atomic}) {
    try {
      fusekit::reduce(fusekit::cpu{}, span<const float>(x), &out, fusekit::minimum{}, INFINITY, a);
      ADD_FAILURE() << "float minimum with " << fusekit::to_string(a) << " was accepted";
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("needs an atomic"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(fusekit::to_string(a)), std::string::npos) << e.what();
    }
    EXPECT_THROW(fusekit::reduce(fusekit::cpu{}, span<const float>(x), &out, largest_magnitude{}, 0.0f, a),
                 fusekit::invalid_argument);
  }
  EXPECT_EQ(out, 0.0f);  // nothing was written
  EXPECT_THROW(fusekit::reduce(fusekit::cpu{}, span<const float>(x), &out, fusekit::plus{}, 0.0f,
                               static_cast<reduce_algorithm>(9)),
               fusekit::invalid_argument);
}

}  // namespace
