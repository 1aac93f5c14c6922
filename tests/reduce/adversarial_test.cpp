// SPDX-License-Identifier: Apache-2.0
// reduce_api.hpp, called the way a careless or unlucky user would: bad views for
// every sum (the same checks for reduce_sum and transform_reduce_sum), sums
// that overflow 64-bit integers (defined wrap-around, also under UBSan), random
// sizes with NaN and infinities planted, extreme magnitudes, and thread counts
// out of range. Every call either throws invalid_argument naming the argument,
// with the output untouched, or returns what IEEE addition (or two's-complement
// wrap-around) says.
#include <fusekit/fusekit.hpp>

#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::reduce_algorithm;
using fusekit::test::signed_values;

template <class F, class T>
void expect_rejected(F f, const std::vector<std::string>& needles, const T& untouched) {
  T const before = untouched;
  try {
    f();
    ADD_FAILURE() << "not rejected: " << needles[0];
  } catch (const fusekit::invalid_argument& e) {
    for (const auto& needle : needles) { EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what(); }
  }
  EXPECT_EQ(0, std::memcmp(&before, &untouched, sizeof(T))) << "written before rejecting";
}

// ---- one validation for every sum -------------------------------------------

TEST(AdversarialSum, TransformReduceSumChecksOutLikeReduceSum) {
  struct buffers {
    alignas(16) double a[64];
    alignas(16) double b[64];
  } buf{};
  for (int i = 0; i < 64; ++i) {
    buf.a[i] = i;
    buf.b[i] = 1;
  }
  span<const double> const a(buf.a, 32), b(buf.b, 32);
  auto* misaligned = reinterpret_cast<double*>(reinterpret_cast<unsigned char*>(buf.a + 40) + 4);
  for (auto alg : fusekit::all_reduce_algorithms) {
    expect_rejected([&] { fusekit::transform_reduce_sum(fusekit::cpu{}, misaligned, alg, fusekit::weigh{}, a, b); },
                    {"transform_reduce_sum", "out is not aligned"}, buf);
    expect_rejected([&] { fusekit::transform_reduce_sum(fusekit::cpu{}, buf.a + 5, alg, fusekit::weigh{}, a, b); },
                    {"out overlaps ins[0]"}, buf);
    expect_rejected([&] { fusekit::transform_reduce_sum(fusekit::cpu{}, buf.b + 31, alg, fusekit::weigh{}, a, b); },
                    {"out overlaps ins[1]"}, buf);
    expect_rejected(
        [&] {
          fusekit::transform_reduce_sum(fusekit::cpu{}, static_cast<double*>(nullptr), alg, fusekit::weigh{}, a, b);
        },
        {"out is null"}, buf);
    // A second input longer, or shorter, than the first.
    expect_rejected(
        [&] {
          fusekit::transform_reduce_sum(fusekit::cpu{}, buf.a + 40, alg, fusekit::weigh{}, a,
                                        span<const double>(buf.b, 33));
        },
        {"ins[1]", "33", "32", "same size"}, buf);
    expect_rejected(
        [&] {
          fusekit::transform_reduce_sum(fusekit::cpu{}, buf.a + 40, alg, fusekit::weigh{}, a,
                                        span<const double>(buf.b, 31));
        },
        {"ins[1]", "31"}, buf);
    expect_rejected([&] { fusekit::reduce_sum(fusekit::cpu{}, a, misaligned, alg); },
                    {"reduce_sum", "out is not aligned"}, buf);
    expect_rejected([&] { fusekit::reduce_sum(fusekit::cpu{}, a, buf.a + 31, alg); }, {"out overlaps in"}, buf);
  }
  // Touching, not overlapping: out right after the input is fine.
  double const want = 31.0 * 32 / 2;
  fusekit::reduce_sum(fusekit::cpu{}, a, buf.a + 32, reduce_algorithm::deterministic);
  EXPECT_EQ(buf.a[32], want);
}

TEST(AdversarialSum, ThreadCountsOutOfRange) {
  std::vector<float> x(100000, 1.0f);
  float out = -3.0f;
  expect_rejected([&] { fusekit::reduce_sum(fusekit::cpu{-1}, span<const float>(x), &out); },
                  {"fusekit::cpu", "threads", "-1"}, out);
  // A huge count is clamped to what the machine can run, not obeyed.
  EXPECT_EQ(fusekit::sum(fusekit::cpu{INT_MAX}, span<const float>(x)), 100000.0f);
  EXPECT_EQ(fusekit::sum(fusekit::cpu{INT_MAX}, span<const float>(x), reduce_algorithm::block_atomic), 100000.0f);
}

// ---- integers: wrap-around, defined --------------------------------------------

TEST(AdversarialSum, SignedOverflowWrapsAround) {
  std::int64_t const max = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> x(20000, max);  // 20000 · (2^63 − 1) mod 2^64
  std::uint64_t want = 0;
  for (auto v : x) { want += static_cast<std::uint64_t>(v); }
  for (auto alg : fusekit::all_reduce_algorithms) {
    std::int64_t const got = fusekit::sum(fusekit::cpu{}, span<const std::int64_t>(x), alg);
    EXPECT_EQ(static_cast<std::uint64_t>(got), want) << fusekit::to_string(alg);
  }
  std::vector<std::int64_t> const just_over = {max, 1, 1};
  for (auto alg : fusekit::all_reduce_algorithms) {
    EXPECT_EQ(fusekit::sum(fusekit::cpu{}, span<const std::int64_t>(just_over), alg),
              std::numeric_limits<std::int64_t>::min() + 1)
        << fusekit::to_string(alg);
  }
  std::vector<std::uint64_t> const unsigned_over(3, std::numeric_limits<std::uint64_t>::max());
  for (auto alg : fusekit::all_reduce_algorithms) {
    EXPECT_EQ(fusekit::sum(fusekit::cpu{}, span<const std::uint64_t>(unsigned_over), alg),
              std::numeric_limits<std::uint64_t>::max() - 2)
        << fusekit::to_string(alg);
  }
}

// ---- floating point: what IEEE addition says -----------------------------------

TEST(AdversarialSum, RandomSizesWithPlantedSpecials) {
  std::mt19937 gen(99);
  std::uniform_int_distribution<std::size_t> size(1, 40000);
  std::uniform_int_distribution<int> kind(0, 5);
  for (int trial = 0; trial < 60; ++trial) {
    std::size_t const n = size(gen);
    auto x = signed_values<float>(n, static_cast<std::uint32_t>(trial));
    bool nan = false, pos_inf = false, neg_inf = false;
    std::uniform_int_distribution<std::size_t> where(0, n - 1);
    for (int k = kind(gen); k > 0; --k) {
      std::size_t const i = where(gen);
      int const what = kind(gen) % 3;
      x[i] = what == 0 ? NAN : (what == 1 ? INFINITY : -INFINITY);
    }
    for (float v : x) {
      nan = nan || fusekit::test::is_nan(v);
      pos_inf = pos_inf || v == INFINITY;
      neg_inf = neg_inf || v == -INFINITY;
    }
    for (auto alg : fusekit::all_reduce_algorithms) {
      float const s = fusekit::sum(fusekit::cpu{}, span<const float>(x), alg);
      if (nan || (pos_inf && neg_inf)) {
        EXPECT_TRUE(fusekit::test::is_nan(s)) << "trial " << trial << " " << fusekit::to_string(alg);
      } else if (pos_inf || neg_inf) {
        EXPECT_EQ(s, pos_inf ? INFINITY : -INFINITY) << "trial " << trial << " " << fusekit::to_string(alg);
      } else {
        EXPECT_TRUE(fusekit::test::is_finite(s)) << "trial " << trial;
      }
    }
  }
}

TEST(AdversarialSum, ExtremeMagnitudes) {
  // Two FLT_MAX overflow float: inf, also when carried in double and rounded once.
  std::vector<float> const big = {FLT_MAX, FLT_MAX};
  for (auto alg : fusekit::all_reduce_algorithms) {
    EXPECT_EQ(fusekit::sum(fusekit::cpu{}, span<const float>(big), alg), INFINITY) << fusekit::to_string(alg);
    EXPECT_EQ((fusekit::sum(fusekit::cpu{}, span<const float>(big), alg, fusekit::accumulate_in<double>{})),
              2.0 * FLT_MAX)
        << fusekit::to_string(alg);
  }
  // Subnormals sum exactly (without -ffast-math, which flushes them to zero).
  std::vector<double> const tiny(1000, 4.9406564584124654e-324);
  for (auto alg : fusekit::all_reduce_algorithms) {
    double const s = fusekit::sum(fusekit::cpu{}, span<const double>(tiny), alg);
#if defined(__FAST_MATH__)
    EXPECT_GE(s, 0.0);
#else
    EXPECT_EQ(s, 1000 * 4.9406564584124654e-324) << fusekit::to_string(alg);
#endif
  }
}

TEST(AdversarialSum, TransformReduceDefaultsToTheDeterministicTree) {
  auto const a = signed_values<float>(300001, 5);
  auto const b = signed_values<float>(300001, 6);
  float const by_default =
      fusekit::transform_reduce(fusekit::cpu{}, fusekit::weigh{}, span<const float>(a), span<const float>(b));
  float det = 0;
  fusekit::transform_reduce_sum(fusekit::cpu{}, &det, reduce_algorithm::deterministic, fusekit::weigh{},
                                span<const float>(a), span<const float>(b));
  float parallel = 0;
  fusekit::transform_reduce_sum(fusekit::cpu{}, &parallel, reduce_algorithm::block_atomic, fusekit::weigh{},
                                span<const float>(a), span<const float>(b));
  std::uint32_t bd, bt, bp;
  std::memcpy(&bd, &by_default, 4);
  std::memcpy(&bt, &det, 4);
  std::memcpy(&bp, &parallel, 4);
  EXPECT_EQ(bd, bt);
  EXPECT_NE(bt, bp) << "the data must tell the two algorithms apart";
  // And sum's default too.
  float const sum_default = fusekit::sum(fusekit::cpu{}, span<const float>(a));
  EXPECT_EQ(sum_default, fusekit::sum(fusekit::cpu{}, span<const float>(a), reduce_algorithm::deterministic));
}

// ---- an op that throws -------------------------------------------------------
// The contract (reduce_api.hpp): an op must not throw, and one that does calls
// std::terminate on every algorithm and size, the serial small calls included
// (cub at n = 100 used to pass the exception through, every other case ended
// the process from inside an OpenMP region).
struct throws_past {
  float limit;
  FUSEKIT_HD float operator()(float a, float b) const {
    if (b > limit) { throw std::runtime_error("op gave up"); }
    return a < b ? b : a;
  }
};
struct throws_on {
  float limit;
  FUSEKIT_HD float operator()(float a) const {
    if (a > limit) { throw std::runtime_error("op gave up"); }
    return a;
  }
};

TEST(AdversarialOpDeathTest, AThrowingOpTerminatesOnEveryAlgorithmAndSize) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the parent has OpenMP threads
  for (std::size_t n : {std::size_t{100}, std::size_t{1} << 20}) {
    std::vector<float> x(n, 1.0f);
    x[n / 2] = 5.0f;  // the op throws there
    span<const float> const in(x);
    for (auto a : {reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
      EXPECT_DEATH(
          {
            float out = 0;
            fusekit::reduce(fusekit::cpu{}, in, &out, throws_past{2.0f}, 0.0f, a);
          },
          "terminate")
          << "reduce, n " << n << ", " << fusekit::to_string(a);
    }
    for (auto a : fusekit::all_reduce_algorithms) {
      EXPECT_DEATH(
          (void)fusekit::transform_reduce(fusekit::cpu{}, a, fusekit::accumulate_in<float>{}, throws_on{2.0f}, in),
          "terminate")
          << "transform_reduce, n " << n << ", " << fusekit::to_string(a);
    }
  }
}

}  // namespace
