// SPDX-License-Identifier: Apache-2.0
// The division the GPU kernel runs for normalize (detail/elementwise/divisor.hpp):
// one product and two FMAs by a reciprocal computed once must give the bits
// of the IEEE quotient x / y for every x and y. Checked here on the host
// (std::fma is the device's fused multiply-add, rounded once):
//   - every significand of x, both signs, for divisors of every kind;
//   - every exponent of x (subnormals included) for a stride of significands,
//     which tests that a power of two scales the algorithm exactly inside the
//     range it takes, and that the rest falls back to the division;
//   - zeros, infinities, NaN and the range's edges, for x and for y;
//   - normalize's prepared form, alone and fused into the hidden layer.
// The reference is the compiler's x / y (this file is never built with
// -ffast-math, which would turn it into x · (1/y)).
#include <fusekit/fusekit.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#define FUSEKIT_TEST_HAS_FTZ 1
#else
#define FUSEKIT_TEST_HAS_FTZ 0
#endif

#if defined(__FAST_MATH__)
#error "divisor_test compares against x / y, which -ffast-math does not round once"
#endif

namespace {

using fusekit::detail::bit_cast;
using fusekit::detail::float_divisor;

std::uint32_t bits_of(float x) { return bit_cast<std::uint32_t>(x); }
std::uint64_t bits_of(double x) { return bit_cast<std::uint64_t>(x); }
float float_of(std::uint32_t b) { return bit_cast<float>(b); }

bool same(float a, float b) { return bits_of(a) == bits_of(b) || (std::isnan(a) && std::isnan(b)); }

// Divisors of every kind: the greyscale one, small integers, non-terminating
// reciprocals, powers of two and their neighbours (the reciprocal's
// significand is 1 or just below), the extreme exponents, and random ones.
std::vector<float> divisors() {
  std::vector<float> ys = {255.0f, 1.0f, 3.0f, 7.0f, 10.0f, 0.1f, 1.0f / 3.0f, 65535.0f, 1e-30f, 1e30f};
  for (float p : {1.0f, 0x1p-124f, 0x1p124f, 0x1p-20f}) {
    ys.push_back(std::nextafter(p, 0.0f));
    ys.push_back(std::nextafter(p, 4.0f * p));
  }
  ys.push_back(float_of(0x3fffffffu));  // largest significand
  ys.push_back(0x1.8p-125f);
  ys.push_back(0x1.fffffep124f);
  std::mt19937 gen(20261205);
  for (int i = 0; i < 14; ++i) {
    std::uint32_t const significand = gen() & 0x007fffffu;
    std::uint32_t const exponent = 127u - 40u + gen() % 81u;  // 2^-40 .. 2^40
    ys.push_back(float_of((exponent << 23) | significand));
  }
  return ys;
}

// Subnormal inputs and results read and written as zero on this thread while
// it lives, as the device's arithmetic under --use_fast_math (-ftz=true).
class flush_to_zero {
 public:
  explicit flush_to_zero(bool on) {
#if FUSEKIT_TEST_HAS_FTZ
    saved_ = _mm_getcsr();
    if (on) { _mm_setcsr(saved_ | 0x8040u); }  // FTZ and DAZ
#else
    (void)on;
#endif
  }
  ~flush_to_zero() {
#if FUSEKIT_TEST_HAS_FTZ
    _mm_setcsr(saved_);
#endif
  }
  flush_to_zero(const flush_to_zero&) = delete;
  flush_to_zero& operator=(const flush_to_zero&) = delete;

 private:
  unsigned saved_ = 0;
};

// Mismatches of float_divisor(y)(x) against x / y over x = f(0), ..., f(count − 1),
// on two threads (with subnormals flushed on both when `ftz`).
template <class X>
std::uint64_t mismatches(float y, std::uint32_t count, const X& f, float* first_bad_x, bool ftz = false) {
  float_divisor const d(y);
  std::uint64_t bad[2] = {0, 0};
  float first[2] = {0, 0};
  auto work = [&](int t) {
    flush_to_zero const mode(ftz);
    for (std::uint32_t i = static_cast<std::uint32_t>(t); i < count; i += 2) {
      float const x = f(i);
      if (!same(d(x), x / y)) {
        if (bad[t]++ == 0) { first[t] = x; }
      }
    }
  };
  std::thread helper(work, 1);
  work(0);
  helper.join();
  *first_bad_x = bad[0] ? first[0] : first[1];
  return bad[0] + bad[1];
}

TEST(FloatDivisor, EverySignificandOfXForDivisorsOfEveryKind) {
  for (float y : divisors()) {
    for (std::uint32_t sign : {0u, 0x80000000u}) {
      float bad_x = 0;
      std::uint64_t const bad = mismatches(
          y, 1u << 23, [&](std::uint32_t m) { return float_of(sign | 0x3f800000u | m); }, &bad_x);
      EXPECT_EQ(bad, 0u) << "y = " << std::hexfloat << y << ", first at x = " << bad_x;
    }
  }
}

// Every 251st significand at every exponent (subnormals and infinities
// included), for every sign: 2 · 256 · 33,421 values per divisor.
void every_exponent(bool ftz) {
  std::uint32_t const per_exponent = (1u << 23) / 251u + 1u;
  for (float y : divisors()) {
    for (float s : {y, -y}) {
      float bad_x = 0;
      std::uint64_t const bad = mismatches(
          s, 2u * 256u * per_exponent,
          [&](std::uint32_t i) {
            std::uint32_t const sign = (i & 1u) << 31;
            std::uint32_t const exponent = (i >> 1) / per_exponent;
            std::uint32_t const significand = ((i >> 1) % per_exponent) * 251u;
            return float_of(sign | (exponent << 23) | (significand & 0x007fffffu));
          },
          &bad_x, ftz);
      EXPECT_EQ(bad, 0u) << "y = " << std::hexfloat << s << ", first at x = " << bad_x << (ftz ? " (ftz)" : "");
    }
  }
}

TEST(FloatDivisor, EveryExponentOfXIncludingSubnormalsAndTheEdges) { every_exponent(false); }

// Under --use_fast_math the device flushes subnormals: the range the divisor
// takes keeps every value it computes normal (or zero), so its bits stay x / y's
// (flushed alike); what it leaves to the division is the division's.
TEST(FloatDivisor, TheSameBitsWithSubnormalsFlushed) {
  if (!FUSEKIT_TEST_HAS_FTZ) { GTEST_SKIP() << "no flush-to-zero mode on this host"; }
  every_exponent(true);
}

// Every float x, for the greyscale divisor and a few others: about 10 s each
// on 2 cores (run with --gtest_also_run_disabled_tests).
TEST(FloatDivisor, DISABLED_EveryFloatX) {
  for (float y : {255.0f, 3.0f, 0.1f, 0x1.fffffep124f}) {
    float bad_x = 0;
    std::uint64_t bad = mismatches(
        y, 0x80000000u, [](std::uint32_t i) { return float_of(i); }, &bad_x);
    bad += mismatches(
        y, 0x80000000u, [](std::uint32_t i) { return float_of(0x80000000u | i); }, &bad_x);
    EXPECT_EQ(bad, 0u) << "y = " << std::hexfloat << y << ", at x = " << bad_x;
  }
}

TEST(FloatDivisor, ZerosInfinitiesNanAndTheRangeEdges) {
  float const inf = std::numeric_limits<float>::infinity();
  float const nan = std::numeric_limits<float>::quiet_NaN();
  float const tiny = std::numeric_limits<float>::denorm_min();
  float const least = std::numeric_limits<float>::min();
  float const most = std::numeric_limits<float>::max();
  std::vector<float> const special = {
      0.0f,     inf,      nan,      tiny,     least,  most, 0x1p-126f,       0x1p-125f,       0x1p-76f,        0x1p-75f,
      0x1p-74f, 0x1p125f, 0x1p126f, 0x1p127f, 255.0f, 1.0f, 0x1.fffffep-77f, 0x1.000002p-76f, 0x1.fffffep125f, 3.0f,
      0x1p-100f};
  std::vector<float> values;
  for (float v : special) {
    values.push_back(v);
    values.push_back(-v);
    values.push_back(std::nextafter(v, 0.0f));
    values.push_back(std::nextafter(v, inf));
  }
  for (float y : values) {
    float_divisor const d(y);
    for (float x : values) {
      EXPECT_TRUE(same(d(x), x / y)) << std::hexfloat << "x = " << x << ", y = " << y << ": " << d(x) << " against "
                                     << x / y;
      // Quotients near the range's ends: x = y · 2^k for the k at the edges.
      for (int k : {-150, -149, -127, -126, -125, -124, 125, 126, 127, 128}) {
        float const xk = std::ldexp(std::nextafter(y, inf), k);
        EXPECT_TRUE(same(d(xk), xk / y)) << std::hexfloat << "x = " << xk << ", y = " << y;
      }
    }
  }
}

TEST(FloatDivisor, NormalizeRunsItsDivisorInTheKernelWithTheSameBits) {
  // normalize<float> has a prepared form (the GPU kernel runs it); double does not.
  static_assert(fusekit::detail::has_prepare<fusekit::normalize<float>>::value);
  static_assert(!fusekit::detail::has_prepare<fusekit::normalize<double>>::value);
  static_assert(!fusekit::detail::has_prepare<fusekit::weigh>::value);
  auto const layer = fusekit::make_hidden_layer(255.0f);
  auto const prepared = fusekit::detail::prepared_stage(layer);
  static_assert(decltype(prepared)::arity<float> == 2);
  auto const alone = fusekit::detail::prepared_stage(fusekit::normalize<float>{255.0f});
  std::mt19937 gen(7);
  for (int grey = 0; grey < 256; ++grey) {
    auto const g = static_cast<unsigned char>(grey);
    EXPECT_EQ(bits_of(alone(g)), bits_of(static_cast<float>(grey) / 255.0f));
    EXPECT_EQ(bits_of(alone(static_cast<float>(grey))), bits_of(static_cast<float>(grey) / 255.0f));
    for (int k = 0; k < 64; ++k) {
      float const w = float_of((gen() & 0x807fffffu) | ((120u + gen() % 16u) << 23));
      EXPECT_EQ(bits_of(prepared(g, w)), bits_of(layer(g, w))) << grey << " " << w;
    }
  }
  // A stage of the user's own with a prepare(): fused prepares it, and leaves the others as they are.
  struct offset {
    float by;
    float operator()(float x) const { return x + by; }
    fusekit::normalize<float> prepare() const { return fusekit::normalize<float>{1.0f / by}; }
  };
  auto const chain = fusekit::fuse(offset{4.0f}, fusekit::weigh{});
  auto const chain_prepared = fusekit::detail::prepared_stage(chain);
  static_assert(std::is_same_v<std::decay_t<decltype(chain_prepared.stage<0>())>, fusekit::normalize<float>>);
  EXPECT_EQ(chain_prepared(8.0f, 3.0f), 96.0f);  // (8 / 0.25) · 3
  EXPECT_EQ(chain(8.0f, 3.0f), 36.0f);           // (8 + 4) · 3
  // A double quotient divides in double: normalize<float>'s prepared form
  // gives normalize's own bits on double inputs (a product by the reciprocal
  // would not: 3/255 ≠ 3·(1/255) in double).
  fusekit::normalize<float> const plain{255.0f};
  int products_differ = 0;
  for (int k = 0; k < 4096; ++k) {
    double const x = k < 256 ? static_cast<double>(k) : std::ldexp(static_cast<double>(gen() | 1u), -(k % 40));
    EXPECT_EQ(bits_of(alone(x)), bits_of(plain(x))) << std::hexfloat << x;
    EXPECT_EQ(bits_of(alone(x)), bits_of(x / 255.0)) << std::hexfloat << x;
    products_differ += x / 255.0 != x * (1.0 / 255.0) ? 1 : 0;
  }
  EXPECT_GT(products_differ, 100);  // the inputs tell a division from a product by the reciprocal
}

}  // namespace
