// SPDX-License-Identifier: Apache-2.0
// elementwise_api.hpp (and the policy), called the way a careless or unlucky user
// would: random sizes and offsets with guard bytes around every view, touching
// and overlapping views, inputs longer and shorter than the output, non-finite
// and extreme values, narrowing to half types from double and wide integers
// (rounded once, checked against a table of every half value), and thread
// counts out of range. Every call either throws invalid_argument naming the
// argument, with the output untouched, or writes exactly its output, right.
#include <fusekit/fusekit.hpp>

#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using ::cuda::std::span;

template <class F, class T>
void expect_rejected(F f, const std::vector<std::string>& needles, const std::vector<T>& untouched) {
  std::vector<T> const before = untouched;
  try {
    f();
    ADD_FAILURE() << "not rejected: " << needles[0];
  } catch (const fusekit::invalid_argument& e) {
    for (const auto& needle : needles) { EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what(); }
  }
  EXPECT_EQ(0, std::memcmp(before.data(), untouched.data(), untouched.size() * sizeof(T)))
      << "written before rejecting";
}

// A view of n elements at `offset` elements into a buffer with 64 guard bytes on
// each side, filled with a pattern; guards_intact() says whether anything
// outside the view was written.
template <class T>
struct guarded {
  std::vector<unsigned char> bytes;
  std::size_t offset_bytes;
  std::size_t n;
  guarded(std::size_t count, std::size_t offset) : bytes(64 + (count + offset) * sizeof(T) + 64 + 16, 0xa5), n(count) {
    auto const base = reinterpret_cast<std::uintptr_t>(bytes.data()) + 64;
    std::size_t const align = (16 - base % 16) % 16;  // the view's buffer starts 16-byte aligned
    offset_bytes = 64 + align + offset * sizeof(T);
  }
  T* data() { return reinterpret_cast<T*>(bytes.data() + offset_bytes); }
  span<T> view() { return {data(), n}; }
  span<const T> cview() { return {data(), n}; }
  bool guards_intact() const {
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      if ((i < offset_bytes || i >= offset_bytes + n * sizeof(T)) && bytes[i] != 0xa5) { return false; }
    }
    return true;
  }
};

// ---- random shapes, offsets and ops, against a scalar loop -------------------

TEST(AdversarialTransform, RandomSizesOffsetsAndOpsWriteExactlyTheirOutput) {
  std::mt19937 gen(7);
  std::uniform_int_distribution<std::size_t> size(0, 3000), offset(0, 7);
  for (int trial = 0; trial < 120; ++trial) {
    std::size_t const n = trial < 8 ? static_cast<std::size_t>(trial) : size(gen);
    guarded<float> out(n, offset(gen)), w(n, offset(gen));
    guarded<std::uint8_t> grey(n, offset(gen));
    guarded<double> d(n, offset(gen));
    auto const gv = fusekit::test::make_greyscales<std::uint8_t>(n, static_cast<std::uint32_t>(trial));
    auto const wv = fusekit::test::signed_values<float>(n, static_cast<std::uint32_t>(trial + 1000));
    auto const dv = fusekit::test::signed_values<double>(n, static_cast<std::uint32_t>(trial + 2000));
    std::copy(gv.begin(), gv.end(), grey.data());
    std::copy(wv.begin(), wv.end(), w.data());
    std::copy(dv.begin(), dv.end(), d.data());
    switch (trial % 3) {
      case 0: {  // the fused layer, against the exact layer with the bound functors.hpp states
        fusekit::hidden_layer(fusekit::cpu{}, grey.cview(), w.cview(), out.view());
#if defined(__FAST_MATH__)
        double const bound = fusekit::tanh_float_max_ulp + 1.5 + 0.5;  // normalize is x·(1/255) there
#else
        double const bound = fusekit::tanh_float_max_ulp + 0.5 + 0.5;  // two correctly rounded steps before tanh
#endif
        for (std::size_t i = 0; i < n; ++i) {
          long double const exact =
              std::tanh(static_cast<long double>(gv[i]) / 255.0L * static_cast<long double>(wv[i]));
          ASSERT_LE(fusekit::test::ulp_error(out.data()[i], exact), bound) << "trial " << trial << " i " << i;
        }
        break;
      }
      case 1:  // double · float into float: one product, rounded once to float
        fusekit::transform(fusekit::cpu{}, out.view(), fusekit::weigh{}, d.cview(), w.cview());
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(out.data()[i], static_cast<float>(dv[i] * static_cast<double>(wv[i]))) << "trial " << trial;
        }
        break;
      default:  // four inputs through three binary stages
        fusekit::transform(fusekit::cpu{}, out.view(),
                           fusekit::fuse(fusekit::weigh{}, fusekit::weigh{}, fusekit::weigh{}), w.cview(), w.cview(),
                           grey.cview(), w.cview());
        for (std::size_t i = 0; i < n; ++i) {
          float const want = ((wv[i] * wv[i]) * static_cast<float>(gv[i])) * wv[i];
          ASSERT_EQ(out.data()[i], want) << "trial " << trial;
        }
    }
    EXPECT_TRUE(out.guards_intact()) << "trial " << trial << ": written outside out";
    EXPECT_TRUE(w.guards_intact() && grey.guards_intact() && d.guards_intact()) << "trial " << trial;
  }
}

// ---- views: touching, overlapping, sizes ---------------------------------------

TEST(AdversarialTransform, TouchingViewsAreAcceptedOverlappingOnesAreNot) {
  std::size_t const n = 1000;
  std::vector<float> buf(2 * n + 1);
  for (std::size_t i = 0; i < buf.size(); ++i) { buf[i] = static_cast<float>(i % 97) / 97.0f; }
  // out = the first half, the input = the second half: adjacent, sharing no byte.
  fusekit::transform(fusekit::cpu{}, span<float>(buf.data(), n), fusekit::tanh_activate{},
                     span<const float>(buf.data() + n, n));
  // (The CPU loop may contract tanh's polynomial into FMAs where this scalar call does not.)
  double const bound = 2 * fusekit::tanh_float_max_ulp;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_LE(fusekit::test::ulp_error(buf[i], fusekit::tanh_activate{}(static_cast<float>((i + n) % 97) / 97.0f)),
              bound)
        << i;
  }
  // In place: the very same view.
  std::vector<float> same(buf.begin() + static_cast<std::ptrdiff_t>(n), buf.end() - 1);
  std::vector<float> const original = same;
  fusekit::transform(fusekit::cpu{}, span<float>(same), fusekit::tanh_activate{}, span<const float>(same));
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_LE(fusekit::test::ulp_error(same[i], fusekit::tanh_activate{}(original[i])), bound);
  }
  // One element of overlap, either side.
  expect_rejected(
      [&] {
        fusekit::transform(fusekit::cpu{}, span<float>(buf.data(), n), fusekit::tanh_activate{},
                           span<const float>(buf.data() + n - 1, n));
      },
      {"partially overlaps", "ins[0]"}, buf);
  expect_rejected(
      [&] {
        fusekit::transform(fusekit::cpu{}, span<float>(buf.data() + n - 1, n), fusekit::tanh_activate{},
                           span<const float>(buf.data(), n));
      },
      {"partially overlaps"}, buf);
}

TEST(AdversarialTransform, InputsLongerOrShorterThanOutAreRejected) {
  std::vector<float> out(100, -1.0f), in(101, 0.5f);
  for (std::size_t len : {101u, 99u, 0u}) {
    expect_rejected(
        [&] {
          fusekit::transform(fusekit::cpu{}, span<float>(out), fusekit::weigh{}, span<const float>(in.data(), 100),
                             span<const float>(in.data(), len));
        },
        {"ins[1]", std::to_string(len), "100", "same size"}, out);
  }
  expect_rejected(
      [&] {
        fusekit::hidden_layer(fusekit::cpu{}, span<const float>(in), span<const float>(in.data(), 100),
                              span<float>(out));
      },
      {"grey", "101"}, out);
}

TEST(AdversarialTransform, NullAndMisalignedViews) {
  alignas(16) static double storage[64] = {};
  std::vector<float> out(8, 2.0f);
  expect_rejected(
      [&] {
        fusekit::transform(fusekit::cpu{}, span<float>(out), fusekit::tanh_activate{},
                           span<const double>(static_cast<const double*>(nullptr), 8));
      },
      {"ins[0]", "null", "8 elements"}, out);
  expect_rejected(
      [&] {
        fusekit::transform(fusekit::cpu{}, span<float>(out.data(), 1), fusekit::tanh_activate{},
                           span<const double>(static_cast<const double*>(nullptr), 1));
      },
      {"ins[0]", "null", "1 elements"}, out);
  auto const* odd = reinterpret_cast<const double*>(reinterpret_cast<const unsigned char*>(storage) + 4);
  expect_rejected(
      [&] {
        fusekit::transform(fusekit::cpu{}, span<float>(out), fusekit::tanh_activate{}, span<const double>(odd, 8));
      },
      {"ins[0]", "aligned", "8 bytes"}, out);
  auto* odd_out = reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(storage + 20) + 2);
  std::vector<double> snapshot(storage, storage + 64);
  try {
    fusekit::transform(fusekit::cpu{}, span<float>(odd_out, 4), fusekit::tanh_activate{},
                       span<const float>(out.data(), 4));
    ADD_FAILURE() << "misaligned out not rejected";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("out is not aligned"), std::string::npos) << e.what();
  }
  EXPECT_EQ(0, std::memcmp(snapshot.data(), storage, sizeof storage));
}

// ---- values ----------------------------------------------------------------------

TEST(AdversarialTransform, NonFiniteAndExtremeValues) {
  std::vector<float> const x = {NAN, INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 0.0f, -0.0f, 1e30f};
  std::vector<float> const w = {1.0f, 0.0f, 2.0f, 2.0f, 0.5f, INFINITY, 3.0f, 1e30f};
  std::vector<float> out(x.size());
  fusekit::transform(fusekit::cpu{}, span<float>(out), fusekit::tanh_activate{}, span<const float>(x));
  EXPECT_TRUE(fusekit::test::is_nan(out[0]));
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[2], -1.0f);
  EXPECT_EQ(out[3], 1.0f);
  EXPECT_EQ(out[4], -1.0f);
  // weigh: IEEE products (inf · 0 = NaN; 1e30 · 1e30 overflows to inf); then the layer's tanh.
  fusekit::transform(fusekit::cpu{}, span<float>(out), fusekit::fuse(fusekit::weigh{}, fusekit::tanh_activate{}),
                     span<const float>(x), span<const float>(w));
  EXPECT_TRUE(fusekit::test::is_nan(out[0]));
  EXPECT_TRUE(fusekit::test::is_nan(out[1]));  // inf · 0
  EXPECT_EQ(out[2], -1.0f);
  EXPECT_EQ(out[3], 1.0f);                     // FLT_MAX · 2 = inf
  EXPECT_TRUE(fusekit::test::is_nan(out[5]));  // 0 · inf
  EXPECT_EQ(out[7], 1.0f);
  // A double result beyond float's range is ±inf in a float output (not undefined).
  // FLT_MAX + half an ulp is the tie that rounds to inf (ties to even); just below it, FLT_MAX.
  std::vector<double> const big = {1e300, -1e300, 0x1.ffffffp+127, -0x1.ffffffp+127,
                                   std::nextafter(0x1.ffffffp+127, 0.0)};
  std::vector<float> narrowed(big.size());
  fusekit::transform(fusekit::cpu{}, span<float>(narrowed), fusekit::weigh{}, span<const double>(big),
                     span<const double>(std::vector<double>(big.size(), 1.0)));
  EXPECT_EQ(narrowed[0], INFINITY);
  EXPECT_EQ(narrowed[1], -INFINITY);
  EXPECT_EQ(narrowed[2], INFINITY);
  EXPECT_EQ(narrowed[3], -INFINITY);
  EXPECT_EQ(narrowed[4], FLT_MAX);
}

// Every finite non-negative value of a 16-bit type, sorted, to round to by hand.
template <class H>
std::vector<std::pair<long double, std::uint16_t>> all_values() {
  std::vector<std::pair<long double, std::uint16_t>> v;
  for (std::uint32_t b = 0; b < 0x8000u; ++b) {
    auto const bits = static_cast<std::uint16_t>(b);
    H h;
    if constexpr (std::is_same_v<H, __half>) {
      h = __ushort_as_half(bits);
    } else {
      h = __ushort_as_bfloat16(bits);
    }
    float const f = fusekit::detail::convert<float>(h);
    if (fusekit::test::is_finite(f)) { v.emplace_back(f, bits); }
  }
  std::sort(v.begin(), v.end());
  return v;
}

// Round-to-nearest-even by search: the nearest table value to |x| (ties to the
// even bit pattern, that is the even significand), or inf from the largest
// value plus half its spacing on; then x's sign.
std::uint16_t round_by_table(const std::vector<std::pair<long double, std::uint16_t>>& table, long double x,
                             std::uint16_t inf_bits) {
  std::uint16_t const sign = x < 0 ? 0x8000u : 0u;
  long double const m = fabsl(x);
  auto const hi = std::lower_bound(table.begin(), table.end(), std::make_pair(m, std::uint16_t{0}));
  std::uint16_t bits = 0;
  if (hi == table.end()) {
    long double const top = table.back().first, half_spacing = (top - table[table.size() - 2].first) / 2;
    bits = m < top + half_spacing ? table.back().second : inf_bits;  // at the tie, the even neighbour is inf
  } else if (hi->first == m || hi == table.begin()) {
    bits = hi->second;
  } else {
    auto const lo = hi - 1;
    long double const dl = m - lo->first, dh = hi->first - m;
    bits = dl < dh ? lo->second : (dh < dl ? hi->second : ((lo->second & 1u) == 0 ? lo->second : hi->second));
  }
  return static_cast<std::uint16_t>(bits | sign);
}

#if defined(__FAST_MATH__)
constexpr bool flushes_subnormals = true;
#else
constexpr bool flushes_subnormals = false;
#endif

template <class H, class From>
std::uint16_t bits_of(From x) {
  H const h = fusekit::detail::convert<H>(x);
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

TEST(AdversarialTransform, HalfOutputsRoundOnceFromDoubleAndWideIntegers) {
  // The cases that rounded twice through float.
  EXPECT_EQ(fusekit::detail::convert<float>(fusekit::detail::convert<__half>(1.0 + 0x1p-11 + 0x1p-40)),
            1.0f + 0x1p-10f);
  EXPECT_EQ(fusekit::detail::convert<float>(fusekit::detail::convert<__nv_bfloat16>(std::int32_t{16842753})),
            16908288.0f);
  // Through transform, into a half output from a double op.
  std::vector<double> const d = {1.0 + 0x1p-11 + 0x1p-40};
  std::vector<__half> h(1);
  fusekit::transform(fusekit::cpu{}, span<__half>(h), fusekit::normalize{1.0}, span<const double>(d));
  EXPECT_EQ(fusekit::detail::convert<float>(h[0]), 1.0f + 0x1p-10f);
  // Doubles at, just off and far off the midpoints between neighbours, both signs,
  // against the table.
  auto const half_table = all_values<__half>();
  auto const bf16_table = all_values<__nv_bfloat16>();
  std::mt19937_64 gen(11);
  std::uniform_int_distribution<std::size_t> pick_h(0, half_table.size() - 2), pick_b(0, bf16_table.size() - 2);
  std::uniform_int_distribution<int> sign(0, 1);
  for (int i = 0; i < 20000; ++i) {
    double const s = sign(gen) ? -1.0 : 1.0;
    std::size_t const a = pick_h(gen), b = pick_b(gen);
    double const mid_h = static_cast<double>((half_table[a].first + half_table[a + 1].first) / 2);
    double const mid_b = static_cast<double>((bf16_table[b].first + bf16_table[b + 1].first) / 2);
    for (double v : {mid_h, std::nextafter(mid_h, 1e300), std::nextafter(mid_h, -1e300), mid_h * (1 + 0x1p-40)}) {
      ASSERT_EQ((bits_of<__half>(s * v)), round_by_table(half_table, s * v, 0x7c00)) << std::hexfloat << s * v;
    }
    for (double v : {mid_b, std::nextafter(mid_b, 1e300), std::nextafter(mid_b, -1e300), mid_b * (1 - 0x1p-40)}) {
      if (flushes_subnormals && v < 0x1p-126) { continue; }  // -ffast-math flushes subnormal results to 0
      ASSERT_EQ((bits_of<__nv_bfloat16>(s * v)), round_by_table(bf16_table, s * v, 0x7f80)) << std::hexfloat << s * v;
    }
  }
  // Beyond the largest half: inf from 65520 on (65504 + half its spacing of 32).
  EXPECT_EQ((bits_of<__half>(65519.99)), 0x7bffu);
  EXPECT_EQ((bits_of<__half>(65520.0)), 0x7c00u);
  EXPECT_EQ((bits_of<__half>(-1e10)), 0xfc00u);
  // 64- and 32-bit integers, near bf16 midpoints at 2^60 and anywhere; into half, across its range.
  std::uniform_int_distribution<std::int64_t> wide(std::numeric_limits<std::int64_t>::min(),
                                                   std::numeric_limits<std::int64_t>::max());
  std::uniform_int_distribution<std::int32_t> narrow(-100000, 100000);
  for (int i = 0; i < 20000; ++i) {
    std::int64_t const v = i < 2000 ? (std::int64_t{1} << 60) + (std::int64_t{1} << 52) + i - 1000 : wide(gen);
    ASSERT_EQ(bits_of<__nv_bfloat16>(v), round_by_table(bf16_table, static_cast<long double>(v), 0x7f80)) << v;
    auto const u = static_cast<std::uint64_t>(v);
    ASSERT_EQ(bits_of<__nv_bfloat16>(u), round_by_table(bf16_table, static_cast<long double>(u), 0x7f80)) << u;
    std::int32_t const small = narrow(gen);
    ASSERT_EQ(bits_of<__half>(small), round_by_table(half_table, static_cast<long double>(small), 0x7c00)) << small;
  }
}

// ---- the policy ------------------------------------------------------------------

TEST(AdversarialTransform, ThreadCountsOutOfRange) {
  std::vector<float> in(100000, 0.5f), out(100000, -1.0f);
  expect_rejected(
      [&] { fusekit::transform(fusekit::cpu{-1}, span<float>(out), fusekit::tanh_activate{}, span<const float>(in)); },
      {"fusekit::cpu", "threads is -1"}, out);
  fusekit::transform(fusekit::cpu{INT_MAX}, span<float>(out), fusekit::tanh_activate{}, span<const float>(in));
  for (float v : out) { ASSERT_EQ(v, fusekit::tanh_activate{}(0.5f)); }
}

// An op that throws calls std::terminate, serially (n = 100) and inside the
// OpenMP region (2^20) alike: the contract elementwise_api.hpp states.
struct throws_above {
  float limit;
  FUSEKIT_HD float operator()(float a) const {
    if (a > limit) { throw std::runtime_error("op gave up"); }
    return a;
  }
};

TEST(AdversarialTransformDeathTest, AThrowingOpTerminatesAtEverySize) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (std::size_t n : {std::size_t{100}, std::size_t{1} << 20}) {
    std::vector<float> x(n, 1.0f), y(n);
    x[n - 1] = 5.0f;
    EXPECT_DEATH(fusekit::transform(fusekit::cpu{}, span<float>(y), throws_above{2.0f}, span<const float>(x)),
                 "terminate")
        << n;
  }
}

}  // namespace
