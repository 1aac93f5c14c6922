// SPDX-License-Identifier: Apache-2.0
// transform on the host: the GPU kernel's per-thread body run for every thread
// index, the CPU backend against references, and argument validation.
#include <fusekit/detail/elementwise/body.hpp>
#include <fusekit/detail/core/grid_size.hpp>
#include <fusekit/fusekit.hpp>

#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::test::ulp_error;

// ---- plan and kernel body ----------------------------------------------------

TEST(ElementwisePlan, VectorWidthIsSixteenBytesOfTheSmallestType) {
  EXPECT_EQ((fusekit::detail::vector_width_v<float, const float, const float>), 4);
  EXPECT_EQ((fusekit::detail::vector_width_v<float, const std::uint8_t, const float>), 16);
  EXPECT_EQ((fusekit::detail::vector_width_v<double, const __half>), 8);
  EXPECT_EQ((fusekit::detail::vector_width_v<double, const double>), 2);
  // The plan of aligned uint8 greyscales into floats steps 16 elements at a time.
  alignas(64) static std::uint8_t grey[100];
  alignas(64) static float w[100], out[100];
  auto const p =
      fusekit::detail::plan_for(100, out, static_cast<const std::uint8_t*>(grey), static_cast<const float*>(w));
  EXPECT_EQ(p.width, 16);
  EXPECT_EQ(p.head, 0);
  EXPECT_EQ(p.vectors, 6);
  EXPECT_EQ(p.scalars(), 4);
}

TEST(ElementwisePlan, HeadAlignsEveryArray) {
  using fusekit::detail::make_elementwise_plan;
  // float arrays at 0x1004 and 0x2004: 3 scalar elements reach 0x1010 and 0x2010.
  auto p = make_elementwise_plan<2>(100, 4, {0x1004, 0x2004}, {4, 4});
  EXPECT_EQ(p.head, 3);
  EXPECT_EQ(p.vectors, (100 - 3) / 4);
  EXPECT_EQ(p.scalars(), 3 + (100 - 3) % 4);
  // Misaligned relative to each other: no common head, everything scalar.
  p = make_elementwise_plan<2>(100, 4, {0x1004, 0x2008}, {4, 4});
  EXPECT_EQ(p.vectors, 0);
  EXPECT_EQ(p.scalars(), 100);
  // uint8 at 0x3005 with float at 0x4000 + 4·11: h = 11 aligns both.
  p = make_elementwise_plan<2>(1000, 16, {0x3005, 0x4000 + 4 * 5}, {1, 4});
  EXPECT_EQ(p.head, 11);
  EXPECT_EQ(p.tail_begin(), 11 + p.vectors * 16);
  p = make_elementwise_plan<1>(0, 4, {0x1000}, {4});
  EXPECT_EQ(p.items(), 0);
}

TEST(LaunchConfig, GridCoversItemsUpToResidentBlocks) {
  using fusekit::detail::grid_size;
  EXPECT_EQ(grid_size(0, 256, 132, 8), 0);
  EXPECT_EQ(grid_size(1, 256, 132, 8), 1);
  EXPECT_EQ(grid_size(257, 256, 132, 8), 2);
  EXPECT_EQ(grid_size(std::int64_t{1} << 40, 256, 132, 8), 132 * 8);
  EXPECT_EQ(grid_size(std::int64_t{1} << 40, 256, 0, 0), 1);  // never 0 blocks for work
}

// Records which elements the body computes. The last input carries each
// element's index, so the output shows where every result landed.
template <class Out>
struct recording_op {
  int* counts;
  template <class... Xs>
  Out operator()(Xs... xs) const {
    double const values[] = {static_cast<double>(fusekit::detail::convert<float>(xs))...};
    auto const index = static_cast<std::size_t>(values[sizeof...(Xs) - 1]);
    ++counts[index];
    double sum = 0;
    for (std::size_t k = 0; k + 1 < sizeof...(Xs); ++k) { sum += values[k]; }
    return static_cast<Out>(static_cast<double>(index) * 1024 + sum);
  }
};

constexpr std::size_t guard = 64;

// An array of n T at `offset` bytes past a 64-byte boundary, guarded on both sides.
template <class T>
struct placed {
  std::vector<unsigned char> bytes;
  T* data;
  placed(std::size_t n, std::size_t offset) : bytes((n + 2 * guard) * sizeof(T) + 128) {
    auto base = reinterpret_cast<std::uintptr_t>(bytes.data());
    base = (base + 63) / 64 * 64 + guard * sizeof(T) + offset;
    data = reinterpret_cast<T*>(base);
  }
};

// Runs the body for every thread of a simulated launch of `threads` threads.
template <class Out, class... Ins>
void run_all_threads(std::int64_t threads, std::int64_t n, const recording_op<Out>& op, Out* out, const Ins*... ins) {
  auto const plan = fusekit::detail::plan_for(n, out, ins...);
  for (std::int64_t t = 0; t < threads; ++t) { fusekit::detail::elementwise_thread(t, threads, plan, op, out, ins...); }
}

// Every size 0..300, every alignment of every array, three launch shapes:
// each element is computed once, lands at its index, and nothing around the
// output changes.
template <class Out, class Extra1, class Extra2>
void check_body_coverage(const std::vector<std::size_t>& out_offsets, const std::vector<std::size_t>& e1_offsets,
                         const std::vector<std::size_t>& e2_offsets, const std::vector<std::size_t>& index_offsets) {
  constexpr std::int64_t max_n = 300;
  Out const sentinel = static_cast<Out>(-7.0);
  std::int64_t vector_plans = 0;
  for (std::size_t oo : out_offsets) {
    for (std::size_t o1 : e1_offsets) {
      for (std::size_t o2 : e2_offsets) {
        for (std::size_t oi : index_offsets) {
          placed<Out> out(max_n, oo);
          placed<Extra1> e1(max_n, o1);
          placed<Extra2> e2(max_n, o2);
          placed<float> idx(max_n, oi);
          for (std::int64_t i = 0; i < max_n; ++i) {
            e1.data[i] = static_cast<Extra1>(static_cast<float>(i % 5));
            e2.data[i] = static_cast<Extra2>(static_cast<float>(i % 3));
            idx.data[i] = static_cast<float>(i);
          }
          for (std::int64_t n = 0; n <= max_n; ++n) {
            auto const plan =
                fusekit::detail::plan_for(n, out.data, static_cast<const Extra1*>(e1.data),
                                          static_cast<const Extra2*>(e2.data), static_cast<const float*>(idx.data));
            vector_plans += plan.vectors > 0;
            for (std::int64_t threads : {std::int64_t{1}, std::int64_t{7}, std::int64_t{3 * 256}}) {
              std::vector<int> counts(max_n, 0);
              std::fill(out.data - guard, out.data + max_n + guard, sentinel);
              recording_op<Out> const op{counts.data()};
              run_all_threads(threads, n, op, out.data, static_cast<const Extra1*>(e1.data),
                              static_cast<const Extra2*>(e2.data), static_cast<const float*>(idx.data));
              for (std::int64_t i = 0; i < n; ++i) {
                ASSERT_EQ(counts[i], 1) << "n=" << n << " i=" << i << " threads=" << threads;
                double const want = static_cast<double>(i) * 1024 + (i % 5) + (i % 3);
                ASSERT_EQ(static_cast<double>(out.data[i]), want) << "n=" << n << " i=" << i;
              }
              for (std::int64_t i = n; i < max_n; ++i) { ASSERT_EQ(counts[i], 0); }
              for (std::int64_t i = -static_cast<std::int64_t>(guard); i < 0; ++i) { ASSERT_EQ(out.data[i], sentinel); }
              for (std::int64_t i = n; i < max_n + static_cast<std::int64_t>(guard); ++i) {
                ASSERT_EQ(out.data[i], sentinel) << "written past the end: n=" << n << " i=" << i;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(vector_plans, 0) << "the vector path never ran";
}

std::vector<std::size_t> offsets(std::size_t step) {
  std::vector<std::size_t> v;
  for (std::size_t o = 0; o < 16; o += step) { v.push_back(o); }
  return v;
}

TEST(ElementwiseBody, EveryElementOnceFloatOutUint8AndHalfIn) {
  check_body_coverage<float, std::uint8_t, __half>(offsets(4), offsets(1), offsets(2), {0, 4});
}

TEST(ElementwiseBody, EveryElementOnceDoubleOutWideInputs) {
  check_body_coverage<double, double, std::int16_t>(offsets(8), offsets(8), offsets(2), offsets(4));
}

// ---- CPU backend against references -------------------------------------------

template <class G>
void check_hidden_layer_cpu(std::size_t n, int threads) {
  auto const grey = fusekit::test::make_greyscales<G>(n, 11);
  auto const w = fusekit::test::make_weights<float>(n, 12);
  std::vector<float> out(n, -7.0f);
  fusekit::hidden_layer(fusekit::cpu{threads}, span<const G>(grey), span<const float>(w), span<float>(out));
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
#if defined(__FAST_MATH__)
    // Against the exact layer: normalize is x · (1/255) there (≤ 1.5 ulp), weigh one
    // product (0.5), and tanh passes a relative error on at most 1:1.
    long double const x = fusekit::detail::convert<float>(grey[i]) / 255.0L * w[i];
#else
    // normalize and weigh are single correctly rounded float operations: tanh alone.
    float const x = (fusekit::detail::convert<float>(grey[i]) / 255.0f) * w[i];
#endif
    worst = std::max(worst, ulp_error(out[i], tanhl(static_cast<long double>(x))));
  }
#if defined(__FAST_MATH__)
  EXPECT_LE(worst, fusekit::tanh_float_max_ulp + 1.5 + 0.5) << "n=" << n;
#else
  EXPECT_LE(worst, fusekit::tanh_float_max_ulp) << "n=" << n;
#endif
}

TEST(CpuTransform, HiddenLayerMatchesReferenceForEveryGreyType) {
  for (std::size_t n : {0, 1, 17, 1000, 100003}) {
    check_hidden_layer_cpu<std::uint8_t>(n, 0);
    check_hidden_layer_cpu<float>(n, 2);
    check_hidden_layer_cpu<__half>(n, 1);
    check_hidden_layer_cpu<__nv_bfloat16>(n, 0);
    check_hidden_layer_cpu<std::uint16_t>(n, 0);
  }
}

TEST(CpuTransform, DoubleLayerAgainstLongDouble) {
  std::size_t const n = 50001;
  auto const grey = fusekit::test::make_greyscales<double>(n, 3);
  auto const w = fusekit::test::make_weights<double>(n, 4);
  std::vector<double> out(n);
  fusekit::hidden_layer(fusekit::cpu{}, span<const double>(grey), span<const double>(w), span<double>(out));
  for (std::size_t i = 0; i < n; ++i) {
    long double const ref = tanhl((static_cast<long double>(grey[i]) / 255) * w[i]);
    ASSERT_LE(ulp_error(out[i], ref), 4.0) << i;  // two roundings and tanh's 2 ulp
  }
}

TEST(CpuTransform, OneToFourInputsWithCustomFunctors) {
  std::size_t const n = 70000;
  std::vector<double> a(n), b(n), c(n), d(n), out(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.5 * static_cast<double>(i);
    b[i] = 3.0 - static_cast<double>(i % 7);
    c[i] = static_cast<double>(i % 11);
    d[i] = 0.25;
  }
  span<double> o(out);
  fusekit::transform(
      fusekit::cpu{}, o, [](double x) { return -x; }, span<const double>(a));
  for (std::size_t i = 0; i < n; ++i) { ASSERT_EQ(out[i], -a[i]); }
  fusekit::transform(fusekit::cpu{}, o, fusekit::weigh{}, span<const double>(a), span<const double>(b));
  for (std::size_t i = 0; i < n; ++i) { ASSERT_EQ(out[i], a[i] * b[i]); }
  fusekit::transform(
      fusekit::cpu{}, o, [](double x, double y, double z) { return x * y - z; }, span<const double>(a),
      span<const double>(b), span<const double>(c));
  for (std::size_t i = 0; i < n; ++i) { ASSERT_EQ(out[i], a[i] * b[i] - c[i]); }
  fusekit::transform(
      fusekit::cpu{1}, o, [](double x, double y, double z, double q) { return (x + y) * q - z; }, span<const double>(a),
      span<const double>(b), span<const double>(c), span<const double>(d));
  for (std::size_t i = 0; i < n; ++i) { ASSERT_EQ(out[i], (a[i] + b[i]) * d[i] - c[i]); }
}

TEST(CpuTransform, InPlaceAndHalfOutput) {
  std::size_t const n = 40000;
  auto w = fusekit::test::make_weights<float>(n, 5);
  auto const grey = fusekit::test::make_greyscales<std::uint8_t>(n, 6);
  std::vector<float> expected(n);
  fusekit::hidden_layer(fusekit::cpu{}, span<const std::uint8_t>(grey), span<const float>(w), span<float>(expected));
  // out is the weights' own view: each element is read before it is written.
  fusekit::hidden_layer(fusekit::cpu{}, span<const std::uint8_t>(grey), span<const float>(w), span<float>(w));
  ASSERT_EQ(0, std::memcmp(w.data(), expected.data(), n * sizeof(float)));

  std::vector<__half> h(n);
  fusekit::transform(fusekit::cpu{}, span<__half>(h), fusekit::normalize{1.0f}, span<const float>(expected));
  for (std::size_t i = 0; i < n; ++i) { ASSERT_EQ(__half2float(h[i]), __half2float(__float2half_rn(expected[i]))); }
}

// Calls past the caches run in blocks that prefetch each input ahead
// (tuning.hpp, cpu_stream_tuning): every element is written once, whatever
// the size, the thread count and where each thread's range starts.
// With `forced`, the loop runs as past the caches whatever n: inputs read
// ahead, the output stored past the caches in whole lines
// (detail/elementwise/cpu.hpp, cpu_transform_streamed).
template <class Out, class A, class B>
void check_streaming_blocks(std::int64_t n, int threads, std::int64_t offset, bool forced = false) {
  std::vector<A> a(static_cast<std::size_t>(n + offset + 1));
  std::vector<B> b(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<A>(i % 251);
    b[i] = static_cast<B>(i % 7);
  }
  std::vector<Out> out(a.size(), Out(-7.0f));
  using W = std::conditional_t<std::is_floating_point_v<Out>, Out, float>;  // __half: computed in float
  auto const op = [](A x, B y) { return static_cast<W>(static_cast<W>(x) * 2 + static_cast<W>(y)); };
  if (forced) {
    fusekit::detail::cpu_transform_streamed(fusekit::cpu{threads}, {/*prefetch=*/true, /*stream=*/true}, n, op,
                                            out.data() + offset, a.data() + offset, b.data() + offset);
  } else {
    fusekit::transform(fusekit::cpu{threads}, span<Out>(out.data() + offset, static_cast<std::size_t>(n)), op,
                       span<const A>(a.data() + offset, static_cast<std::size_t>(n)),
                       span<const B>(b.data() + offset, static_cast<std::size_t>(n)));
  }
  for (std::int64_t i = 0; i < offset; ++i) { ASSERT_EQ(static_cast<W>(out[static_cast<std::size_t>(i)]), W(-7)) << i; }
  for (std::int64_t i = offset; i < offset + n; ++i) {
    auto const k = static_cast<std::size_t>(i);
    ASSERT_EQ(static_cast<W>(out[k]), op(a[k], b[k]))
        << "n=" << n << " threads=" << threads << " offset=" << offset << " i=" << i;
  }
  ASSERT_EQ(static_cast<W>(out.back()), W(-7)) << "written past the end";
}

TEST(CpuTransform, StreamingBlocksWriteEveryElementOnce) {
  using fusekit::cpu_stream_tuning;
  for (int threads : {1, 2, 3}) {
    for (std::int64_t offset : {0, 1, 3}) {
      // float = f(uint8, float): 9 bytes an element; double = f(double, double): 24.
      std::int64_t const f_from = cpu_stream_tuning::prefetch_from_bytes / 9;
      for (std::int64_t n : {f_from - 1, f_from, f_from + 1, f_from + cpu_stream_tuning::block - 1, 3 * f_from + 17}) {
        check_streaming_blocks<float, std::uint8_t, float>(n, threads, offset);
      }
      std::int64_t const d_from = cpu_stream_tuning::prefetch_from_bytes / 24;
      for (std::int64_t n : {d_from + 1, d_from + 2 * cpu_stream_tuning::block + 5}) {
        check_streaming_blocks<double, double, double>(n, threads, offset);
      }
    }
  }
}

// Stores past the caches: a plain head up to the first whole cache line,
// blocks stored in whole lines, a plain tail; every element once, for 2-, 4-
// and 8-byte outputs, each thread's range starting anywhere in a line.
TEST(CpuTransform, StreamStoresWriteEveryElementOnce) {
  constexpr std::int64_t block = fusekit::cpu_stream_tuning::block;
  for (int threads : {1, 2, 3}) {
    for (std::int64_t offset : {0, 1, 3, 17}) {
      for (std::int64_t n :
           {std::int64_t{0}, std::int64_t{1}, block - 1, block, block + 1, 3 * block + 5, std::int64_t{4099}}) {
        check_streaming_blocks<float, std::uint8_t, float>(n, threads, offset, /*forced=*/true);
        check_streaming_blocks<__half, float, std::uint8_t>(n, threads, offset, /*forced=*/true);
        check_streaming_blocks<double, double, double>(n, threads, offset, /*forced=*/true);
      }
    }
  }
}

// A call streams its output from cpu_stream_tuning::stream_stores_from_bytes
// written on (tuning.hpp), and through the public call at that size every
// element is still written once.
TEST(CpuTransform, StreamsItsOutputFromTheDocumentedSize) {
  using fusekit::cpu_stream_tuning;
  using fusekit::detail::transform_streaming_for;
  std::int64_t const floats = cpu_stream_tuning::stream_stores_from_bytes / 4;
  EXPECT_FALSE((transform_streaming_for<float, const float, const float>(floats - 1).stream));
  EXPECT_EQ((transform_streaming_for<float, const float, const float>(floats).stream), FUSEKIT_STREAM_STORES == 1);
  EXPECT_TRUE((transform_streaming_for<float, const float, const float>(floats).prefetch));
  EXPECT_FALSE((transform_streaming_for<double, const double>(floats / 2 - 1).stream));
  EXPECT_EQ((transform_streaming_for<double, const double>(floats / 2).stream), FUSEKIT_STREAM_STORES == 1);
  check_streaming_blocks<float, float, float>(floats + 5, 2, 1);
}

TEST(CpuTransform, UnfusedMatchesFusedExactly) {
  // Same functors, same roundings: the three passes give the fused result bit for bit.
  for (std::size_t n : {1, 999, 65537}) {
    auto const grey = fusekit::test::make_greyscales<std::uint8_t>(n, 8);
    auto const w = fusekit::test::make_weights<float>(n, 9);
    std::vector<float> fused(n), unfused(n);
    fusekit::hidden_layer(fusekit::cpu{}, span<const std::uint8_t>(grey), span<const float>(w), span<float>(fused));
    fusekit::hidden_layer_unfused(fusekit::cpu{}, span<const std::uint8_t>(grey), span<const float>(w),
                                  span<float>(unfused));
#if defined(__FAST_MATH__)  // the compiler may contract and reassociate the two loops differently
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_LE(ulp_error(fused[i], unfused[i]), 2 * (fusekit::tanh_float_max_ulp + 1.5));
    }
#else
    ASSERT_EQ(0, std::memcmp(fused.data(), unfused.data(), n * sizeof(float)));
#endif
  }
}

#if FUSEKIT_CPU_DISPATCH
// The transform loop as cpu_transform_streamed runs it, for one ISA entry.
template <class Out, class Op, class A, class B>
void layer_loop(const Op& op, std::vector<Out>& out, const std::vector<A>& a, const std::vector<B>& b) {
  FUSEKIT_SIMD_LOOP
  for (std::size_t i = 0; i < out.size(); ++i) { out[i] = fusekit::detail::convert<Out>(op(a[i], b[i])); }
}
#endif

// isa_dispatch_wide's AVX-512 code gives the AVX2+FMA code's bits (its
// contract; under -ffast-math, which lets the compiler regroup by vector
// width, the layer's bound), for the fused layer over every uint8 value and a
// sweep of weights, and for the same layer in double.
TEST(CpuTransform, WideVectorsGiveTheAvx2Bits) {
#if !FUSEKIT_CPU_DISPATCH
  GTEST_SKIP() << "no run-time ISA dispatch in this build";
#else
  if (!fusekit::detail::cpu_has_avx512()) { GTEST_SKIP() << "this CPU has no AVX-512"; }
  auto const layer = fusekit::fuse(fusekit::normalize{255.0f}, fusekit::weigh{}, fusekit::tanh_activate{});
  std::vector<float> weights{0.0f,
                             -0.0f,
                             1e-40f,
                             -1e-40f,
                             std::numeric_limits<float>::infinity(),
                             -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};
  std::size_t const specials = weights.size();
  (void)specials;
  for (int k = 0; k < 4096; ++k) { weights.push_back(std::ldexp(static_cast<float>(k - 2048), -8) + 0.1f * k); }
  std::vector<std::uint8_t> grey;
  std::vector<float> w;
  for (float x : weights) {
    for (int g = 0; g < 256; ++g) {
      grey.push_back(static_cast<std::uint8_t>(g));
      w.push_back(x);
    }
  }
  std::vector<float> avx2(grey.size()), avx512(grey.size());
  fusekit::detail::call_avx2([&] { layer_loop(layer, avx2, grey, w); });
  fusekit::detail::call_avx512([&] { layer_loop(layer, avx512, grey, w); });
#if defined(__FAST_MATH__)  // the compiler may regroup by vector width: the bound, not the bits
  for (std::size_t i = specials * 256; i < avx2.size(); ++i) {  // -ffast-math assumes finite values
    ASSERT_LE(ulp_error(avx2[i], avx512[i]), 2 * (fusekit::tanh_float_max_ulp + 1.5)) << i;
  }
#else
  ASSERT_EQ(0, std::memcmp(avx2.data(), avx512.data(), avx2.size() * sizeof(float)));
#endif
  std::vector<double> gd(grey.begin(), grey.end()), wd(w.begin(), w.end()), d2(gd.size()), d512(gd.size());
  auto const double_layer = fusekit::fuse(fusekit::normalize{255.0}, fusekit::weigh{}, fusekit::tanh_activate{});
  fusekit::detail::call_avx2([&] { layer_loop(double_layer, d2, gd, wd); });
  fusekit::detail::call_avx512([&] { layer_loop(double_layer, d512, gd, wd); });
#if defined(__FAST_MATH__)
  for (std::size_t i = specials * 256; i < d2.size(); ++i) {
    ASSERT_LE(std::fabs(d2[i] - d512[i]), 1e-15 * std::fabs(d2[i]) + 1e-300) << i;
  }
#else
  ASSERT_EQ(0, std::memcmp(d2.data(), d512.data(), d2.size() * sizeof(double)));
#endif
#endif
}

// ---- bad arguments --------------------------------------------------------------

// Runs f, expects fusekit::invalid_argument mentioning every word of `needles`,
// and that `out` is untouched.
template <class F, class T>
void expect_rejected(F f, const std::vector<std::string>& needles, const std::vector<T>& out) {
  std::vector<T> const before = out;
  try {
    f();
    ADD_FAILURE() << "not rejected";
  } catch (const fusekit::invalid_argument& e) {
    for (const auto& needle : needles) { EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what(); }
  }
  EXPECT_EQ(0, std::memcmp(before.data(), out.data(), out.size() * sizeof(T))) << "written before rejecting";
}

TEST(CpuTransformArguments, RejectedBeforeAnythingIsWritten) {
  std::size_t const n = 64;
  std::vector<float> w(n, 0.5f), out(n, -7.0f), grey(n, 3.0f);
  fusekit::cpu const cpu{};
  span<float> o(out);
  span<const float> g(grey), wv(w);
  expect_rejected([&] { fusekit::hidden_layer(cpu, span<const float>(static_cast<const float*>(nullptr), n), wv, o); },
                  {"hidden_layer", "grey", "null"}, out);
  expect_rejected([&] { fusekit::hidden_layer(cpu, g, span<const float>(static_cast<const float*>(nullptr), n), o); },
                  {"w", "null"}, out);
  expect_rejected([&] { fusekit::hidden_layer(cpu, g, wv, span<float>(static_cast<float*>(nullptr), n)); },
                  {"out", "null"}, out);
  expect_rejected([&] { fusekit::hidden_layer(cpu, g.first(n - 1), wv, o); }, {"grey", "63", "64", "same size"}, out);
  expect_rejected([&] { fusekit::transform(cpu, o, fusekit::weigh{}, g, wv.first(1)); }, {"transform", "ins[1]"}, out);
  // Partial overlap: out one element past an input.
  expect_rejected(
      [&] { fusekit::transform(cpu, o.subspan(1), fusekit::tanh_activate{}, span<const float>(out.data(), n - 1)); },
      {"partially overlaps", "ins[0]"}, out);
  // Same address, different element type: not in place.
  std::vector<double> d(n, 1.0);
  expect_rejected(
      [&] {
        fusekit::transform(cpu, span<float>(reinterpret_cast<float*>(d.data()), n / 2), fusekit::tanh_activate{},
                           span<const double>(d.data(), n / 2));
      },
      {"partially overlaps", "ins[0]"}, d);
  // Misaligned float view.
  auto const* odd = reinterpret_cast<const float*>(reinterpret_cast<const unsigned char*>(grey.data()) + 1);
  expect_rejected([&] { fusekit::transform(cpu, o.first(8), fusekit::tanh_activate{}, span<const float>(odd, 8)); },
                  {"ins[0]", "aligned", "4 bytes"}, out);
  // The unfused chain needs out apart from its inputs.
  expect_rejected([&] { fusekit::hidden_layer_unfused(cpu, g, wv, span<float>(w)); },
                  {"hidden_layer_unfused", "overlaps", "w"}, out);
}

TEST(CpuTransformArguments, EmptyAndNullEmptyAreFine) {
  fusekit::transform(fusekit::cpu{}, span<float>(), fusekit::tanh_activate{}, span<const float>());
  std::vector<float> out(3, 1.0f);
  fusekit::transform(fusekit::cpu{}, span<float>(out).first(0), fusekit::tanh_activate{},
                     span<const float>(static_cast<const float*>(nullptr), 0));
  EXPECT_EQ(out[0], 1.0f);
}

}  // namespace
