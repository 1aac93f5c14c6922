// SPDX-License-Identifier: Apache-2.0
// Functor numerics against long-double references, and fuse's composition and
// arity rules. Host only: the same functors run in the kernels.
#include <fusekit/functors.hpp>

#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace {

using fusekit::test::ulp_error;

float float_from_bits(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

#if !defined(__FAST_MATH__)
// The user's formula, for contrast: NaN once e^x overflows.
float tanh_by_exp(float x) { return (std::exp(x) - std::exp(-x)) / (std::exp(x) + std::exp(-x)); }
#endif

struct sweep_result {
  double worst_ulp = 0;
  float worst_x = 0;
  std::uint64_t checked = 0;
  std::uint64_t nan_for_finite = 0;
};

// -ffast-math flushes subnormals to zero (its documented effect): there, a
// subnormal x gives ±0 instead of x, and the bound is for normal x only.
#if defined(__FAST_MATH__)
constexpr bool flushes_subnormals = true;
#else
constexpr bool flushes_subnormals = false;
#endif

// On the bits: with subnormals flushed, a subnormal also compares equal to 0.
bool is_subnormal(float x) { return (bits_of(x) & 0x7fffffffu) != 0 && (bits_of(x) & 0x7f800000u) == 0; }

sweep_result sweep_tanh(std::uint64_t first, std::uint64_t last, std::uint64_t stride) {
  sweep_result r;
  for (std::uint64_t b = first; b <= last; b += stride) {
    float const x = float_from_bits(static_cast<std::uint32_t>(b));
    if (flushes_subnormals && is_subnormal(x)) {
      EXPECT_EQ(fusekit::tanh_activate{}(x), 0.0f);
      continue;
    }
    float const y = fusekit::tanh_activate{}(x);
    if (fusekit::test::is_finite(x) && fusekit::test::is_nan(y)) { ++r.nan_for_finite; }
    double const e = ulp_error(y, tanhl(static_cast<long double>(x)));
    if (e > r.worst_ulp) {
      r.worst_ulp = e;
      r.worst_x = x;
    }
    ++r.checked;
  }
  return r;
}

TEST(TanhActivate, SpecialValues) {
  fusekit::tanh_activate const t;
  EXPECT_EQ(bits_of(t(0.0f)), bits_of(0.0f));
  EXPECT_EQ(bits_of(t(-0.0f)), bits_of(-0.0f));
  EXPECT_EQ(t(INFINITY), 1.0f);
  EXPECT_EQ(t(-INFINITY), -1.0f);
  EXPECT_EQ(t(FLT_MAX), 1.0f);
  EXPECT_EQ(t(-FLT_MAX), -1.0f);
  EXPECT_EQ(t(9.1f), 1.0f);
  EXPECT_EQ(t(-100.0f), -1.0f);
  EXPECT_TRUE(fusekit::test::is_nan(t(NAN)));
  EXPECT_TRUE(fusekit::test::is_nan(t(-NAN)));
  // Subnormals: tanh(x) rounds to x.
  for (float x : {FLT_TRUE_MIN, -FLT_TRUE_MIN, 1e-40f, -3e-39f, FLT_MIN, 1e-20f}) { EXPECT_EQ(t(x), x) << x; }
  // Where the user's formula breaks (inf / inf), ours does not.
#if !defined(__FAST_MATH__)  // -ffast-math may fold the user's formula differently
  EXPECT_TRUE(fusekit::test::is_nan(tanh_by_exp(100.0f)));
#endif
  EXPECT_EQ(t(100.0f), 1.0f);
}

// Every 4099th bit pattern: all signs, binades, subnormals, infinities and NaNs.
TEST(TanhActivate, FloatRangeSweepWithinBound) {
  sweep_result const r = sweep_tanh(0, 0xffffffffull, 4099);
  EXPECT_GT(r.checked, 1000000u);
  EXPECT_EQ(r.nan_for_finite, 0u);
  EXPECT_LE(r.worst_ulp, fusekit::tanh_float_max_ulp) << "at x = " << r.worst_x;
}

// Every float in the interval where the two formulas meet, and near 1.
TEST(TanhActivate, DenseAroundBranchPointsWithinBound) {
  sweep_result const a = sweep_tanh(bits_of(0.55f), bits_of(0.75f), 1);
  EXPECT_LE(a.worst_ulp, fusekit::tanh_float_max_ulp) << "at x = " << a.worst_x;
  sweep_result const b = sweep_tanh(bits_of(8.5f), bits_of(10.5f), 1);
  EXPECT_LE(b.worst_ulp, fusekit::tanh_float_max_ulp) << "at x = " << b.worst_x;
  sweep_result const c = sweep_tanh(bits_of(1e-4f), bits_of(2e-3f), 7);
  EXPECT_LE(c.worst_ulp, fusekit::tanh_float_max_ulp) << "at x = " << c.worst_x;
}

// Every non-negative float up to 10 (about 10^9 values, a minute or two):
//   ./functors_test --gtest_also_run_disabled_tests --gtest_filter='*Exhaustive*'
TEST(TanhActivate, DISABLED_ExhaustiveFloat) {
  sweep_result const r = sweep_tanh(0, bits_of(10.0f), 1);
  std::printf("tanh sweep (scalar): %llu floats, worst %.3f ulp at x = %.9g\n",
              static_cast<unsigned long long>(r.checked), r.worst_ulp, static_cast<double>(r.worst_x));
  EXPECT_EQ(r.nan_for_finite, 0u);
  EXPECT_LE(r.worst_ulp, fusekit::tanh_float_max_ulp) << "at x = " << r.worst_x;
}

TEST(TanhActivate, DoubleWithinPlatformBound) {
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> exponent(-30.0, 6.0);
  double worst = 0;
  for (int i = 0; i < 200000; ++i) {
    double const x = (i % 2 ? -1 : 1) * std::exp2(exponent(gen));
    double const y = fusekit::tanh_activate{}(x);
    static_assert(std::is_same_v<decltype(fusekit::tanh_activate{}(x)), double>);
    worst = std::max(worst, ulp_error(y, tanhl(static_cast<long double>(x))));
  }
  // glibc lists 2 ulp for tanh; measured in ulps of the exact result it reaches 2.03.
  EXPECT_LE(worst, 2.5);
  EXPECT_EQ(fusekit::tanh_activate{}(1e300), 1.0);
  EXPECT_TRUE(fusekit::test::is_nan(fusekit::tanh_activate{}(std::nan(""))));
}

TEST(FastTanhActivate, HostStaysWithinDocumentedBound) {
  fusekit::fast_tanh_activate const t;
  for (std::uint64_t b = 0; b <= 0x7f800000u; b += 8191) {
    float const x = float_from_bits(static_cast<std::uint32_t>(b));
    if (flushes_subnormals && is_subnormal(x)) { continue; }
    long double const ref = tanhl(x);
    long double const rel = ref == 0 ? 0 : fabsl((t(x) - ref) / ref);
    ASSERT_LE(static_cast<double>(rel), fusekit::fast_tanh_activate::max_relative_error) << x;
  }
  EXPECT_TRUE(fusekit::test::is_nan(t(NAN)));
  EXPECT_EQ(t(INFINITY), 1.0f);
}

TEST(Normalize, IsOneCorrectlyRoundedDivision) {
  fusekit::normalize const n{255.0f};
  for (int g = 0; g < 256; ++g) {
    auto const u = static_cast<std::uint8_t>(g);
    static_assert(std::is_same_v<decltype(n(u)), float>);
    long double const exact = static_cast<long double>(g) / 255.0L;
#if defined(__FAST_MATH__)
    EXPECT_LE(ulp_error(n(u), exact), 1.5) << g;  // x · (1/scale): two roundings
#else
    EXPECT_EQ(n(u), static_cast<float>(exact)) << g;  // correctly rounded
#endif
    EXPECT_EQ(n(static_cast<float>(g)), n(u));
    EXPECT_EQ(n(__float2half(static_cast<float>(g))), n(u));  // integers to 255 are exact in half
  }
  fusekit::normalize const nd{255.0};
  static_assert(std::is_same_v<decltype(nd(std::uint8_t{3})), double>);
  EXPECT_EQ(nd(std::uint8_t{3}), 3.0 / 255.0);
  // 32-bit integers compute in double: exact beyond 2^24.
  static_assert(std::is_same_v<decltype(n(std::int32_t{1})), double>);
  EXPECT_EQ(n(std::int32_t{16777217}), 16777217.0 / 255.0);
}

TEST(Weigh, ComputeTypeAndExactProduct) {
  fusekit::weigh const w;
  static_assert(std::is_same_v<decltype(w(std::uint8_t{2}, 0.5f)), float>);
  static_assert(std::is_same_v<decltype(w(1.0f, 2.0)), double>);
  static_assert(std::is_same_v<decltype(w(__float2bfloat16(1.0f), __float2half(1.0f))), float>);
  EXPECT_EQ(w(3.0f, 0.25f), 0.75f);
  EXPECT_EQ(w(std::uint8_t{200}, 0.5f), 100.0f);
  EXPECT_EQ(w(__float2bfloat16(1.5f), __float2half(2.0f)), 3.0f);
  float const a = 0.1f, b = 0.3f;
  EXPECT_EQ(w(a, b), static_cast<float>(static_cast<long double>(a) * b));
}

TEST(ComputeType, ArithmeticRunsInTheDocumentedType) {
  EXPECT_TRUE((std::is_same_v<fusekit::compute_t<float>, float>));
  EXPECT_TRUE((std::is_same_v<fusekit::compute_t<std::uint8_t>, float>));
  EXPECT_TRUE((std::is_same_v<fusekit::compute_t<std::int16_t, __half>, float>));
  EXPECT_TRUE((std::is_same_v<fusekit::compute_t<__nv_bfloat16>, float>));
  EXPECT_TRUE((std::is_same_v<fusekit::compute_t<double, float>, double>));
  EXPECT_TRUE((std::is_same_v<fusekit::compute_t<std::uint32_t>, double>));
  EXPECT_TRUE((std::is_same_v<fusekit::compute_t<const std::int64_t>, double>));
  EXPECT_TRUE(fusekit::detail::is_supported_element_v<std::uint8_t>);
  EXPECT_FALSE(fusekit::detail::is_supported_element_v<bool>);
  EXPECT_FALSE(fusekit::detail::is_supported_element_v<long double>);
  // The values show it: 2^24 + 1 survives in double and not in float.
  EXPECT_EQ(fusekit::normalize{1.0f}(std::uint32_t{16777217}), 16777217.0);
  EXPECT_EQ(fusekit::normalize{1.0f}(std::int64_t{-16777217}), -16777217.0);
  // uint16 and float compute in float: 4097² = 16785409 rounds to 16785408.
  EXPECT_EQ(static_cast<double>(fusekit::weigh{}(std::uint16_t{4097}, 4097.0f)), 16785408.0);
  EXPECT_EQ(fusekit::weigh{}(std::uint32_t{4097}, 4097.0f), 16785409.0);
}

// NaN and infinity are told apart from the largest finite values on the bits,
// in every type and build (-ffast-math included).
TEST(Numeric, FiniteAndNanOnTheBits) {
  using fusekit::detail::is_finite;
  using fusekit::detail::is_nan;
  for (float f : {0.0f, -0.0f, FLT_MIN, FLT_TRUE_MIN, 0x1p127f, FLT_MAX, -FLT_MAX, 1.0f}) {
    EXPECT_TRUE(is_finite(f)) << f;
    EXPECT_FALSE(is_nan(f)) << f;
  }
  for (double d : {DBL_MAX, -DBL_MAX, 0x1p1023, DBL_MIN, 0.0}) {
    EXPECT_TRUE(is_finite(d)) << d;
    EXPECT_FALSE(is_nan(d)) << d;
  }
  EXPECT_FALSE(is_finite(INFINITY));
  EXPECT_FALSE(is_finite(-INFINITY));
  EXPECT_FALSE(is_finite(NAN));
  EXPECT_TRUE(is_nan(NAN));
  EXPECT_FALSE(is_nan(INFINITY));
  EXPECT_FALSE(is_finite(static_cast<double>(INFINITY)));
  EXPECT_TRUE(is_nan(std::nan("")));
  EXPECT_TRUE(is_finite(__float2half(65504.0f)));
  EXPECT_FALSE(is_finite(__float2half(INFINITY)));
  EXPECT_TRUE(is_nan(__float2half(NAN)));
  EXPECT_TRUE(is_finite(__float2bfloat16(0x1p127f)));
  EXPECT_FALSE(is_finite(__float2bfloat16(-INFINITY)));
  EXPECT_TRUE(is_finite(std::int64_t{-1}));
  EXPECT_FALSE(is_nan(std::uint8_t{255}));
}

TEST(HalfTypes, TanhOfHalfAndBfloat16ComputesInFloat) {
  fusekit::tanh_activate const t;
  static_assert(std::is_same_v<decltype(t(__float2half(0.5f))), float>);
  EXPECT_EQ(t(__float2half(0.5f)), t(0.5f));
  EXPECT_EQ(t(__float2bfloat16(-2.0f)), t(-2.0f));
}

// ---- fuse -----------------------------------------------------------------

struct add_one {  // unary, detected
  template <class T>
  T operator()(T x) const {
    return x + T(1);
  }
};
struct subtract {  // binary, detected
  template <class T>
  T operator()(T x, T y) const {
    return x - y;
  }
};
struct both_ways {  // callable with one or two: must declare its arity
  static constexpr int arity = 2;
  float operator()(float x) const { return x; }
  float operator()(float x, float y) const { return x * 10 + y; }
};

TEST(Fuse, HiddenLayerIsTheThreeStagesInOrder) {
  auto const layer = fusekit::fuse(fusekit::normalize{255.0f}, fusekit::weigh{}, fusekit::tanh_activate{});
  static_assert(std::is_same_v<decltype(layer), const fusekit::hidden_layer_op<float>>);
  auto const grey = fusekit::test::make_greyscales<std::uint8_t>(4096, 1);
  auto const w = fusekit::test::make_weights<float>(4096, 2);
  [[maybe_unused]] double worst = 0;
  for (std::size_t i = 0; i < grey.size(); ++i) {
    float const x = (static_cast<float>(grey[i]) / 255.0f) * w[i];  // two correctly rounded steps
    float const y = layer(grey[i], w[i]);
#if defined(__FAST_MATH__)  // x · (1/255), and the two sides may be contracted differently
    EXPECT_LE(ulp_error(y, fusekit::tanh_activate{}(x)), 2 * (fusekit::tanh_float_max_ulp + 1.5));
  }
#else
    EXPECT_EQ(y, fusekit::tanh_activate{}(x));
    worst = std::max(worst, ulp_error(y, tanhl(static_cast<long double>(x))));
  }
  EXPECT_LE(worst, fusekit::tanh_float_max_ulp);
#endif
}

TEST(Fuse, ArityIsOnePlusBinaryStages) {
  auto const layer = fusekit::make_hidden_layer();
  using L = decltype(layer);
  static_assert(L::arity<float> == 2);
  static_assert(std::is_invocable_v<const L&, std::uint8_t, float>);
  static_assert(!std::is_invocable_v<const L&, float>);
  static_assert(!std::is_invocable_v<const L&, float, float, float>);

  auto const chain = fusekit::fuse(add_one{}, subtract{}, add_one{}, subtract{}, fusekit::weigh{});
  using C = decltype(chain);
  static_assert(C::arity<float> == 4);
  EXPECT_EQ(chain(1.0f, 2.0f, 3.0f, 4.0f), (((1.0f + 1) - 2.0f + 1) - 3.0f) * 4.0f);

  auto const unary = fusekit::fuse(fusekit::tanh_activate{});
  static_assert(decltype(unary)::arity<float> == 1);
  EXPECT_EQ(unary(0.25f), fusekit::tanh_activate{}(0.25f));
}

TEST(Fuse, BinaryFirstStageTakesTheFirstTwoInputs) {
  auto const f = fusekit::fuse(subtract{}, add_one{});
  static_assert(decltype(f)::arity<float> == 2);
  EXPECT_EQ(f(5.0f, 2.0f), 4.0f);
}

TEST(Fuse, DeclaredArityWinsOverDetection) {
  auto const f = fusekit::fuse(add_one{}, both_ways{});
  static_assert(decltype(f)::arity<float> == 2);
  EXPECT_EQ(f(1.0f, 3.0f), 23.0f);
}

TEST(Fuse, LambdasAndStageAccess) {
  auto const f = fusekit::fuse([](float x) { return 2 * x; }, [](float x, float y) { return x + y; });
  EXPECT_EQ(f(3.0f, 1.0f), 7.0f);
  auto const layer = fusekit::make_hidden_layer(100.0f);
  EXPECT_EQ(layer.stage<0>().scale, 100.0f);
}

TEST(Fuse, RunningTypePromotes) {
  // uint8 in, float weight: float; a double weight promotes the rest to double.
  auto const layer = fusekit::make_hidden_layer();
  static_assert(std::is_same_v<decltype(layer(std::uint8_t{1}, 1.0f)), float>);
  static_assert(std::is_same_v<decltype(layer(std::uint8_t{1}, 1.0)), double>);
  EXPECT_NEAR(layer(std::uint8_t{255}, 1.0), std::tanh(1.0), 1e-15);
}

}  // namespace
