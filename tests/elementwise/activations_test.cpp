// SPDX-License-Identifier: Apache-2.0
// sigmoid, silu, softplus, gelu_tanh, gelu_erf, relu and leaky_relu against long-double
// references written from their definitions, through the CPU backend's SIMD
// loop and its AVX2+FMA clone as `transform` runs them, and one element at a
// time: the two must give the same bits (nothing in the kernels may be
// contracted into a multiply-add differently), within the documented bounds.
// ctest builds this file with the flags users choose, as tanh_sweep_test: the
// defaults, -ffast-math, -O2 -ffast-math, -O3 -march=native -ffast-math.
// Floats: a stride through every float and every float of the hard intervals;
// doubles: random sweeps of the ranges where each function changes form.
#include <fusekit/fusekit.hpp>

#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

namespace {

using fusekit::test::ulp_error;

#if defined(__FAST_MATH__)
// -ffast-math's startup code sets flush-to-zero: results below the smallest
// normal number may be ±0 (the documented effect), and subnormal x counts as 0.
constexpr bool flushes_subnormals = true;
#else
constexpr bool flushes_subnormals = false;
#endif

long double const pi_l = 3.141592653589793238462643383279502884L;

// References from the definitions, in long double (64-bit significand).
long double sigmoid_ref(long double x) { return 1.0L / (1.0L + expl(-x)); }
long double silu_ref(long double x) { return x / (1.0L + expl(-x)); }
long double softplus_ref(long double x) { return x < 64 ? log1pl(expl(x)) : x + expl(-x); }
long double gelu_tanh_ref(long double x) {
  long double const y = sqrtl(2.0L / pi_l) * (x + 0.044715L * x * x * x);
  // 1 + tanh(y) cancels for y ≪ 0: there it is 2/(1 + e^{−2y}).
  long double const one_plus_tanh = y > -2 ? 1.0L + tanhl(y) : 2.0L / (1.0L + expl(-2.0L * y));
  return 0.5L * x * one_plus_tanh;
}
// x·Φ(x) = x − x·Q(x) for x ≥ 0 and x·Q(−x) below, Q(a) = erfc(a/√2)/2 with
// a/√2 = u + du in two long doubles: the relative error of erfc(u) grows
// as 2u·du, up to 2^-53 for a rounded u near 27. erfc(u + du) = erfc(u) −
// (2/√π)e^{−u²}du to second order in du.
long double gelu_erf_ref(long double x) {
  long double const a = fabsl(x);
  if (a > 1e4L) { return x < 0 ? -0.0L : x; }                        // Q(a) = 0 (no inf·0)
  long double const r_hi = 0.707106781186547524400844362104849039L;  // 1/√2 rounded
  long double const r_lo = fmal(-r_hi, r_hi, 0.5L) / (2.0L * r_hi);  // 1/√2 − r_hi
  long double const u = a * r_hi;
  long double const du = fmal(a, r_hi, -u) + a * r_lo;
  long double const q = 0.5L * (erfcl(u) - 2.0L / sqrtl(pi_l) * expl(-u * u) * du);
  return x < 0 ? x * q : x - x * q;
}

struct activation_case {
  const char* name;
  long double (*ref)(long double);
  double float_bound;
  double double_bound;
};

template <class F>
activation_case describe(const char* name, long double (*ref)(long double)) {
  return {name, ref, F::max_ulp, F::max_ulp_double};
}

struct sweep_result {
  double worst_ulp = 0;
  double worst_x = 0;
  std::size_t checked = 0;
  std::size_t differ_from_scalar = 0;
};

bool below_normal(long double r, bool is_float) {
  return fabsl(r) < (is_float ? static_cast<long double>(FLT_MIN) : static_cast<long double>(DBL_MIN));
}

// y = f(x) through transform (SIMD, ISA clone) and one by one; the error of each against ref.
template <class F, class T>
sweep_result check(const F& f, long double (*ref)(long double), const std::vector<T>& x) {
  sweep_result r;
  std::vector<T> y(x.size());
  fusekit::transform(fusekit::cpu{}, y, f, x);
  for (std::size_t i = 0; i < x.size(); ++i) {
    T const one = f(x[i]);
    if (fusekit::detail::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(one) !=
        fusekit::detail::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(y[i])) {
      ++r.differ_from_scalar;
    }
    long double const exact = ref(static_cast<long double>(x[i]));
    if (flushes_subnormals && below_normal(exact, sizeof(T) == 4) && y[i] == T(0)) { continue; }
    double const e = ulp_error(y[i], exact);
    ++r.checked;
    if (e > r.worst_ulp) {
      r.worst_ulp = e;
      r.worst_x = static_cast<double>(x[i]);
    }
  }
  return r;
}

// Floats with bits first, first + stride, ... below last, both signs; NaN skipped.
std::vector<float> floats(std::uint32_t first, std::uint32_t last, std::uint32_t stride) {
  std::vector<float> x;
  for (std::uint64_t b = first; b < last; b += stride) {
    for (std::uint32_t sign : {0u, 0x80000000u}) {
      float const v = fusekit::detail::bit_cast<float>(static_cast<std::uint32_t>(b) | sign);
      if (fusekit::detail::is_finite(v) || (static_cast<std::uint32_t>(b) & 0x7fffffu) == 0) { x.push_back(v); }
    }
  }
  return x;
}

// Every float in [lo, hi] (both positive), with both signs.
std::vector<float> every_float(float lo, float hi) {
  return floats(fusekit::detail::bit_cast<std::uint32_t>(lo), fusekit::detail::bit_cast<std::uint32_t>(hi) + 1, 1);
}

std::vector<double> doubles(double lo, double hi, std::size_t n, std::uint64_t seed) {
  std::vector<double> x(n);
  for (auto& v : x) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v = lo + (hi - lo) * (static_cast<double>(seed >> 11) * 0x1p-53);
  }
  return x;
}

// Most of x must be checked, unless all of it may flush (subnormal x under -ffast-math).
template <class F>
void expect_float_bound(const F& f, long double (*ref)(long double), const std::vector<float>& x, const char* where,
                        bool may_all_flush = false) {
  sweep_result const r = check(f, ref, x);
  EXPECT_EQ(r.differ_from_scalar, 0u) << where;
  EXPECT_LE(r.worst_ulp, F::max_ulp) << where << ": at x = " << r.worst_x;
  if (!(may_all_flush && flushes_subnormals)) { EXPECT_GE(r.checked, x.size() / 2) << where; }
}

template <class F>
void expect_double_bound(const F& f, long double (*ref)(long double), double lo, double hi) {
  sweep_result const r =
      check(f, ref, doubles(lo, hi, 200000, 0x5eed + static_cast<std::uint64_t>(static_cast<std::int64_t>(hi))));
  EXPECT_EQ(r.differ_from_scalar, 0u) << "[" << lo << ", " << hi << "]";
  EXPECT_LE(r.worst_ulp, F::max_ulp_double) << "[" << lo << ", " << hi << "]: at x = " << r.worst_x;
}

template <class F>
class Activation : public ::testing::Test {};

struct sigmoid_t {
  using functor = fusekit::sigmoid;
  static long double ref(long double x) { return sigmoid_ref(x); }
};
struct silu_t {
  using functor = fusekit::silu;
  static long double ref(long double x) { return silu_ref(x); }
};
struct softplus_t {
  using functor = fusekit::softplus;
  static long double ref(long double x) { return softplus_ref(x); }
};
struct gelu_tanh_t {
  using functor = fusekit::gelu_tanh;
  static long double ref(long double x) { return gelu_tanh_ref(x); }
};
struct gelu_erf_t {
  using functor = fusekit::gelu_erf;
  static long double ref(long double x) { return gelu_erf_ref(x); }
};
using activations = ::testing::Types<sigmoid_t, silu_t, softplus_t, gelu_tanh_t, gelu_erf_t>;
TYPED_TEST_SUITE(Activation, activations);

TYPED_TEST(Activation, FloatStrideThroughEveryFloatWithinBound) {
  // 1 float in 211 of each sign, from the subnormals to inf.
  expect_float_bound(typename TypeParam::functor{}, TypeParam::ref, floats(0, 0x7f800001u, 211), "stride 211");
}

TYPED_TEST(Activation, FloatHardIntervalsWithinBound) {
  typename TypeParam::functor const f{};
  // Near 0, where each is linear or constant plus linear, and in the subnormals.
  expect_float_bound(f, TypeParam::ref, every_float(1e-6f, 1.05e-6f), "[1e-6, 1.05e-6]");
  expect_float_bound(f, TypeParam::ref, floats(0, 0x800000u, 17), "subnormals, 1 in 17", true);
  // log1p's branch at e^{−|x|} = √2 − 1 (|x| = 0.881), the series' edge.
  expect_float_bound(f, TypeParam::ref, every_float(0.87f, 0.89f), "[0.87, 0.89]");
  // Where the results reach the subnormals (sigmoid, silu below −87) and round to 1 or x.
  expect_float_bound(f, TypeParam::ref, every_float(86.0f, 88.0f), "[86, 88]");
  expect_float_bound(f, TypeParam::ref, every_float(16.5f, 17.5f), "[16.5, 17.5]");
  // gelu_tanh's cubic takes over (|x| ≈ 3 to 10).
  expect_float_bound(f, TypeParam::ref, every_float(3.0f, 3.2f), "[3, 3.2]");
  expect_float_bound(f, TypeParam::ref, every_float(9.0f, 9.2f), "[9, 9.2]");
  // gelu_erf's results reach the subnormals (x near −13.2).
  expect_float_bound(f, TypeParam::ref, every_float(13.0f, 13.3f), "[13, 13.3]");
}

TYPED_TEST(Activation, DoubleSweepsWithinBound) {
  typename TypeParam::functor const f{};
  expect_double_bound(f, TypeParam::ref, -1.0, 1.0);
  expect_double_bound(f, TypeParam::ref, -40.0, 40.0);
  expect_double_bound(f, TypeParam::ref, -30.0, -7.0);   // gelu_tanh's results reach the subnormals
  expect_double_bound(f, TypeParam::ref, -39.0, -36.0);  // and gelu_erf's
  expect_double_bound(f, TypeParam::ref, -6.0, 6.0);     // gelu_erf's polynomial in (|x| − 4)/(|x| + 4)
  expect_double_bound(f, TypeParam::ref, -745.0, -30.0);
  expect_double_bound(f, TypeParam::ref, 30.0, 800.0);
  expect_double_bound(f, TypeParam::ref, -1e-300, 1e-300);
}

TYPED_TEST(Activation, SpecialValues) {
  typename TypeParam::functor const f{};
  float const inf = std::numeric_limits<float>::infinity();
  float const nan = std::numeric_limits<float>::quiet_NaN();
  for (float x : {0.0f, -0.0f, inf, -inf, FLT_MAX, -FLT_MAX, 1e30f, -1e30f}) {
    long double const exact = TypeParam::ref(static_cast<long double>(x));
    float const y = f(x);
    // Classified on the bits: -ffast-math folds std::isinf to false.
    bool const infinite = !fusekit::detail::is_finite(x);
    if (infinite && std::signbit(x)) {
      EXPECT_EQ(y, 0.0f) << "x = " << x;  // silu and gelu_tanh: −0; sigmoid and softplus: +0
    } else if (infinite) {
      EXPECT_EQ(y, static_cast<float>(exact)) << "x = " << x;
    } else {
      EXPECT_LE(ulp_error(y, exact), TypeParam::functor::max_ulp) << "x = " << x;
    }
  }
  EXPECT_TRUE(fusekit::detail::bit_cast<std::uint32_t>(f(nan)) << 1 > 0xff000000u);
  EXPECT_TRUE(fusekit::detail::bit_cast<std::uint32_t>(f(-nan)) << 1 > 0xff000000u);
  double const dnan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(fusekit::detail::bit_cast<std::uint64_t>(f(dnan)) << 1 > 0xffe0000000000000ull);
  for (double x : {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), DBL_MAX, -DBL_MAX,
                   -1000.5, 1000.5}) {
    long double const exact = TypeParam::ref(static_cast<long double>(x));
    double const y = f(x);
    if (!fusekit::detail::is_finite(x)) {
      EXPECT_EQ(y, std::signbit(x) ? 0.0 : static_cast<double>(exact)) << "x = " << x;
    } else {
      EXPECT_LE(ulp_error(y, exact), TypeParam::functor::max_ulp_double) << "x = " << x;
    }
  }
}

TEST(Activations, SignsOfZeroAndLimits) {
  EXPECT_EQ(fusekit::sigmoid{}(0.0f), 0.5f);
  EXPECT_EQ(fusekit::sigmoid{}(-0.0f), 0.5f);
  EXPECT_EQ(fusekit::softplus{}(0.0), static_cast<double>(logl(2.0L)));
  EXPECT_EQ(fusekit::silu{}(-2000.0), 0.0);
#if !defined(__FAST_MATH__)  // -fno-signed-zeros: the sign of a zero is not kept
  EXPECT_TRUE(std::signbit(fusekit::silu{}(-0.0f)));
  EXPECT_TRUE(std::signbit(fusekit::gelu_tanh{}(-0.0)));
  EXPECT_TRUE(std::signbit(fusekit::gelu_erf{}(-0.0)));
  EXPECT_TRUE(std::signbit(fusekit::gelu_erf{}(-40.0)));
  EXPECT_TRUE(std::signbit(fusekit::silu{}(-2000.0)));
#endif
  EXPECT_EQ(fusekit::sigmoid{}(800.0), 1.0);
  EXPECT_EQ(fusekit::softplus{}(1e300), 1e300);
  EXPECT_EQ(fusekit::gelu_tanh{}(1e300), 1e300);
  EXPECT_EQ(fusekit::gelu_erf{}(1e300), 1e300);
  EXPECT_EQ(fusekit::gelu_erf{}(39.0), 39.0);
  EXPECT_EQ(fusekit::gelu_erf{}(-40.0), 0.0);
}

TEST(Activations, ComputeTypes) {
  static_assert(std::is_same_v<decltype(fusekit::sigmoid{}(std::uint8_t{3})), float>);
  static_assert(std::is_same_v<decltype(fusekit::gelu_tanh{}(1.0)), double>);
  static_assert(std::is_same_v<decltype(fusekit::leaky_relu{0.01}(1.0f)), double>);
  static_assert(std::is_same_v<decltype(fusekit::relu{}(__half(1.0f))), float>);
  EXPECT_EQ(fusekit::sigmoid{}(std::uint8_t{3}), fusekit::sigmoid{}(3.0f));
  EXPECT_EQ(fusekit::softplus{}(__half(-2.5f)), fusekit::softplus{}(-2.5f));
}

TEST(Relu, ExactOnEveryClass) {
  float const nan = std::numeric_limits<float>::quiet_NaN();
  fusekit::relu const r;
  for (float x : {1.5f, FLT_MAX, FLT_TRUE_MIN, std::numeric_limits<float>::infinity()}) {
    EXPECT_EQ(r(x), x);
    EXPECT_EQ(fusekit::detail::bit_cast<std::uint32_t>(r(-x)), 0u) << x;  // +0, not −0
  }
  EXPECT_EQ(fusekit::detail::bit_cast<std::uint32_t>(r(-0.0f)), 0u);
  EXPECT_TRUE(fusekit::detail::bit_cast<std::uint32_t>(r(nan)) << 1 > 0xff000000u);  // NaN, on the bits
  EXPECT_TRUE(fusekit::detail::bit_cast<std::uint32_t>(r(-nan)) << 1 > 0xff000000u);
  EXPECT_EQ(r(-3.0), 0.0);
}

TEST(LeakyRelu, OneRoundedProductBelowZero) {
  fusekit::leaky_relu const l{0.01f};
  std::uint64_t seed = 7;
  for (int i = 0; i < 100000; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    float const x = fusekit::detail::bit_cast<float>(static_cast<std::uint32_t>(seed >> 32) & 0xff7fffffu);
    if (!fusekit::detail::is_finite(x)) { continue; }
    long double const exact = x >= 0 ? static_cast<long double>(x) : static_cast<long double>(0.01f) * x;
    float const y = l(x);
    if (flushes_subnormals && fabsl(exact) < FLT_MIN && y == 0.0f) { continue; }
    EXPECT_LE(ulp_error(y, exact), 0.5) << "x = " << x;
  }
#if !defined(__FAST_MATH__)  // -fno-signed-zeros, -ffinite-math-only
  EXPECT_TRUE(std::signbit(l(-0.0f)));
  EXPECT_EQ(l(-std::numeric_limits<float>::infinity()), -std::numeric_limits<float>::infinity());
#endif
  EXPECT_TRUE(fusekit::detail::bit_cast<std::uint32_t>(l(std::numeric_limits<float>::quiet_NaN())) << 1 > 0xff000000u);
}

TEST(LeakyRelu, AlphaMustBeFinite) {
  for (float a : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    try {
      fusekit::leaky_relu const l{a};
      ADD_FAILURE() << "accepted alpha = " << l.alpha;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("alpha"), std::string::npos) << e.what();
    }
  }
}

// A product (weigh) right before an activation, in double: nothing in the
// activation may take the product's operands into a multiply-add of its own
// (the AVX2 clone has FMA; one element at a time the baseline build has none).
TEST(Activations, AProductBeforeEachActivationIsRoundedFirst) {
  std::vector<double> x(20000), w(x.size()), y(x.size());
  std::uint64_t seed = 3;
  for (std::size_t i = 0; i < x.size(); ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (static_cast<double>(seed >> 11) * 0x1p-53 - 0.5) * 80.0;
    w[i] = 1.0 + static_cast<double>(i % 97) * 0x1p-20;
  }
  auto const expect_stages = [&](auto activation, const char* name) {
    fusekit::transform(fusekit::cpu{}, y, fusekit::fuse(fusekit::weigh{}, activation), x, w);
    for (std::size_t i = 0; i < x.size(); ++i) {
      double const expect = activation(fusekit::weigh{}(x[i], w[i]));
      ASSERT_EQ(fusekit::detail::bit_cast<std::uint64_t>(y[i]), fusekit::detail::bit_cast<std::uint64_t>(expect))
          << name << " at x = " << x[i] << ", w = " << w[i];
    }
  };
  expect_stages(fusekit::sigmoid{}, "sigmoid");
  expect_stages(fusekit::silu{}, "silu");
  expect_stages(fusekit::softplus{}, "softplus");
  expect_stages(fusekit::gelu_tanh{}, "gelu_tanh");
  expect_stages(fusekit::gelu_erf{}, "gelu_erf");
  expect_stages(fusekit::relu{}, "relu");
  expect_stages(fusekit::leaky_relu{0.01}, "leaky_relu");
}

TEST(Activations, FusedChainIsTheStagesInOrder) {
  // A power-of-two scale: under -ffast-math the compiler may turn a division
  // by 255 into a product by its rounded reciprocal in one loop and not in
  // another, and that is not what this test is about.
  auto const layer = fusekit::fuse(fusekit::normalize{256.0f}, fusekit::weigh{}, fusekit::gelu_tanh{});
  std::vector<float> x(4099), w(4099), y(4099);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] = static_cast<float>(i % 256);
    w[i] = static_cast<float>(static_cast<int>(i % 17) - 8) * 0.75f;
  }
  fusekit::transform(fusekit::cpu{}, y, layer, x, w);
  for (std::size_t i = 0; i < x.size(); ++i) {
    float const expect = fusekit::gelu_tanh{}(fusekit::weigh{}(fusekit::normalize{256.0f}(x[i]), w[i]));
    ASSERT_EQ(y[i], expect) << i;
  }
}

}  // namespace
