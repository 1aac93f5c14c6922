// SPDX-License-Identifier: Apache-2.0
// Sums on the host: the deterministic tree against an independent scalar
// implementation of the same order (bit for bit), every algorithm against a
// long-double reference within its stated bound, exact integer sums, IEEE
// special values, and argument validation. The tree's tiles are summed by
// detail::tree_tile_reduce, the very function the GPU's tree kernel runs (on a
// block_team): these tests check the GPU's order on the CPU.
#include <fusekit/fusekit.hpp>

#include "common/pinned_sums.hpp"
#include "common/reference_tree.hpp"
#include "common/test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <iterator>
#include <vector>

namespace {

using ::cuda::std::span;
using fusekit::reduce_algorithm;
using fusekit::test::exact_sum;
using fusekit::test::reference_tree;
using fusekit::test::signed_values;
using fusekit::test::uniform01;

template <class Acc>
long double unit_roundoff() {
  return std::ldexp(1.0L, -std::numeric_limits<Acc>::digits);
}

std::vector<std::size_t> tile_boundary_sizes() {
  return {0,
          1,
          2,
          255,
          256,
          257,
          8191,
          8192,
          8193,
          2 * 8192 - 1,
          2 * 8192,
          8192 * 3 + 5,
          8192 * 8192 - 1,
          8192 * 8192,
          8192 * 8192 + 1};
}

TEST(DeterministicTree, CpuMatchesIndependentImplementationBitForBit) {
  std::mt19937 gen(42);
  std::vector<std::size_t> sizes = tile_boundary_sizes();
  std::uniform_int_distribution<std::size_t> size(0, 1000000);
  for (int i = 0; i < 25; ++i) { sizes.push_back(size(gen)); }
  for (std::size_t n : sizes) {
    auto const x = signed_values<float>(n, static_cast<std::uint32_t>(n));
    float const got = fusekit::sum(fusekit::cpu{}, span<const float>(x), reduce_algorithm::deterministic);
    float const want = reference_tree<float>(x);
    std::uint32_t gb, wb;
    std::memcpy(&gb, &got, 4);
    std::memcpy(&wb, &want, 4);
    ASSERT_EQ(gb, wb) << "n=" << n << " got " << got << " want " << want;
    if (n <= 1000000) {
      double const got_d = fusekit::sum(fusekit::cpu{2}, span<const float>(x), reduce_algorithm::deterministic,
                                        fusekit::accumulate_in<double>{});
      ASSERT_EQ(got_d, (reference_tree<double>(x))) << "n=" << n;
    }
  }
}

TEST(DeterministicTree, SameBitsForAnyThreadCount) {
  auto const x = signed_values<double>(3000001, 9);
  double const one = fusekit::sum(fusekit::cpu{1}, span<const double>(x));
  double const two = fusekit::sum(fusekit::cpu{2}, span<const double>(x));
  double const seven = fusekit::sum(fusekit::cpu{7}, span<const double>(x));
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, seven);
}

TEST(DeterministicTree, LevelCount) {
  EXPECT_EQ(fusekit::detail::tree_levels(0), 0);
  EXPECT_EQ(fusekit::detail::tree_levels(1), 0);
  EXPECT_EQ(fusekit::detail::tree_levels(8192), 1);
  EXPECT_EQ(fusekit::detail::tree_levels(8193), 2);
  EXPECT_EQ(fusekit::detail::tree_levels(std::int64_t{8192} * 8192), 2);
  EXPECT_EQ(fusekit::detail::tree_levels(std::int64_t{8192} * 8192 + 1), 3);
}

// The GPU runs one tile per block: a level of t tiles gets min(t, resident
// blocks) blocks, never fewer than min(t, SMs) (an H200 has 132 SMs).
TEST(DeterministicTree, GridHasOneBlockPerTileUpToTheResidentBlocks) {
  for (int const sms : {1, 16, 132}) {
    for (int const per_sm : {1, 8}) {
      for (int const log2n : {20, 24, 28}) {
        std::int64_t const n = std::int64_t{1} << log2n;
        std::int64_t const tiles = fusekit::detail::tree_level_size(n);
        int const grid = fusekit::detail::tree_level_grid(n, sms, per_sm);
        EXPECT_GE(grid, std::min<std::int64_t>(tiles, sms)) << "n=2^" << log2n << " sms=" << sms;
        EXPECT_EQ(grid, std::min<std::int64_t>(tiles, std::int64_t{sms} * per_sm)) << "n=2^" << log2n;
      }
    }
  }
  EXPECT_EQ(fusekit::detail::tree_level_grid(0, 132, 8), 0);
  EXPECT_EQ(fusekit::detail::tree_level_grid(1, 132, 8), 1);
  EXPECT_EQ(fusekit::detail::tree_level_grid(8193, 132, 8), 2);
}

// Bounds from reduce_api.hpp's table, for the CPU backend.
template <class Acc>
long double cpu_bound(reduce_algorithm a, std::size_t n, long double abs_sum, long double exact) {
  long double const u = unit_roundoff<Acc>();
  auto const terms = static_cast<long double>(n);
  if (a == reduce_algorithm::deterministic) {
    return 40.0L * (fusekit::detail::tree_levels(static_cast<std::int64_t>(n)) + 1) * u * abs_sum;
  }
  if (a == reduce_algorithm::naive_atomic) { return terms * u * abs_sum; }
  if (a == reduce_algorithm::block_atomic) {
    // P partials, one per chunk of values (reduce_api.hpp: a partial per chunk of 2^15 values).
    long double const p = static_cast<long double>(
        fusekit::detail::cpu_split(static_cast<std::int64_t>(n), fusekit::cpu_thread_tuning::values_grain).chunks);
    return (terms / (8 * p) + 8 + p + 1) * u * abs_sum;
  }
  return u * fabsl(exact) + (4096.0L / 8 + 8 + terms / 4096 + 1) * 0x1p-53L * abs_sum;
}

template <class T, class Acc>
void check_against_reference(std::size_t n, std::uint32_t seed) {
  auto const x = signed_values<T>(n, seed);
  long double abs_sum = 0;
  long double const exact = exact_sum(x, &abs_sum);
  for (auto a : fusekit::all_reduce_algorithms) {
    Acc got{};
    fusekit::reduce_sum(fusekit::cpu{}, span<const T>(x), &got, a);
    long double const err = fabsl(static_cast<long double>(got) - exact);
    EXPECT_LE(err, cpu_bound<Acc>(a, n, abs_sum, exact)) << fusekit::to_string(a) << " n=" << n;
  }
}

TEST(CpuSum, EveryAlgorithmWithinItsBound) {
  for (std::size_t n : {1, 100, 8193, 100000, 1000003}) {
    check_against_reference<float, float>(n, 1);
    check_against_reference<float, double>(n, 2);
    check_against_reference<double, double>(n, 3);
    check_against_reference<__half, float>(n, 4);
    check_against_reference<__nv_bfloat16, double>(n, 5);
  }
}

// A tag and the run-time value name one algorithm: the same bits from every
// form (sum, reduce_sum, reduce with plus, transform_reduce, the container
// forms), on one thread, where even the atomics add in index order.
template <class Tag>
void tag_and_value_agree(Tag tag, unsigned seed) {
  auto const x = signed_values<float>(100003, seed);
  fusekit::cpu const one{1};
  float const by_value = fusekit::sum(one, span<const float>(x), Tag::id);
  float const by_tag = fusekit::sum(one, span<const float>(x), tag);
  float into = 0, reduced = 0;
  fusekit::reduce_sum(one, x, &into, tag);
  fusekit::reduce(one, x, &reduced, fusekit::plus{}, 0.0f, tag);
  auto const id = [](float v) { return v; };
  float const transformed = fusekit::transform_reduce(one, tag, fusekit::accumulate_in<float>{}, id, x);
  for (float v : {by_tag, into, reduced, transformed}) {
    EXPECT_EQ(std::memcmp(&v, &by_value, sizeof v), 0) << fusekit::to_string(Tag::id) << ": " << v << " " << by_value;
  }
  double const wide = fusekit::sum(one, x, tag, fusekit::accumulate_in<double>{});
  double const wide_value = fusekit::sum(one, x, Tag::id, fusekit::accumulate_in<double>{});
  EXPECT_EQ(std::memcmp(&wide, &wide_value, sizeof wide), 0) << fusekit::to_string(Tag::id);
}

TEST(CpuSum, ATagAndItsValueNameOneAlgorithm) {
  tag_and_value_agree(fusekit::naive_atomic{}, 11);
  tag_and_value_agree(fusekit::block_atomic{}, 12);
  tag_and_value_agree(fusekit::run_to_run{}, 13);
  tag_and_value_agree(fusekit::deterministic{}, 14);
  // The default is the tree.
  auto const x = signed_values<float>(50000, 15);
  float const by_default = fusekit::sum(fusekit::cpu{}, x);
  float const tree = reference_tree<float>(x);
  EXPECT_EQ(std::memcmp(&by_default, &tree, sizeof tree), 0);
}

TEST(CpuSum, UniformDataRelativeErrorIsSmall) {
  auto const x = uniform01<float>(std::size_t{1} << 24, 6);
  long double const exact = exact_sum(x);
  for (auto a : {reduce_algorithm::block_atomic, reduce_algorithm::deterministic}) {
    float const s = fusekit::sum(fusekit::cpu{}, span<const float>(x), a);
    EXPECT_LE(fabsl((s - exact) / exact), 1e-6L) << fusekit::to_string(a);
  }
}

TEST(CpuSum, IntegersAreExact) {
  std::vector<std::uint8_t> grey(1000001);
  std::uint64_t want8 = 0;
  for (std::size_t i = 0; i < grey.size(); ++i) {
    grey[i] = static_cast<std::uint8_t>(i * 7919 % 255);
    want8 += grey[i];
  }
  std::vector<std::int32_t> ints(700001);
  std::int64_t want32 = 0;
  for (std::size_t i = 0; i < ints.size(); ++i) {
    ints[i] = static_cast<std::int32_t>((i % 2 ? -1 : 1) * static_cast<std::int64_t>(i) * 3001);
    want32 += ints[i];
  }
  std::vector<std::int64_t> big(5, std::int64_t{1} << 60);
  for (auto a : fusekit::all_reduce_algorithms) {
    std::uint64_t const s8 = fusekit::sum(fusekit::cpu{}, span<const std::uint8_t>(grey), a);
    EXPECT_EQ(s8, want8);
    std::int64_t const s32 = fusekit::sum(fusekit::cpu{}, span<const std::int32_t>(ints), a);
    EXPECT_EQ(s32, want32);
    // 5 · 2^60 wraps in 64 bits, as documented.
    std::int64_t const sbig = fusekit::sum(fusekit::cpu{}, span<const std::int64_t>(big), a);
    EXPECT_EQ(static_cast<std::uint64_t>(sbig), std::uint64_t{5} << 60);
  }
}

// Integers of every width: the tree's tiles of an array of integers are exact
// sums that split each value into a low and a high half summed in narrow
// lanes, signed values biased by their sign bit (cpu_exact_sum,
// detail/reduce/cpu_exact_tiles.hpp). At the extremes of each type every lane
// fills to the edge of what it holds before a flush; the sum must be the exact
// one modulo 2^64 (the reference adds in uint64, as documented: it wraps).
// Sizes cover the scalar tail (1 to 65), the tile (8192) and the flush of
// 8-bit lanes (every 4096 values in 16-byte vectors, 8192 in 32-byte ones).
template <class T>
void integers_at_their_extremes_sum_exactly() {
  using Acc = fusekit::accumulator_t<T>;
  constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  std::mt19937_64 gen(19);
  for (std::int64_t const n :
       {std::int64_t{1}, std::int64_t{7}, std::int64_t{63}, std::int64_t{65}, std::int64_t{4097}, std::int64_t{8192},
        std::int64_t{8191}, std::int64_t{8193}, std::int64_t{3 * 8192 + 77}, std::int64_t{70 * 8192}}) {
    for (int pattern = 0; pattern < 4; ++pattern) {
      std::vector<T> x(static_cast<std::size_t>(n));
      std::uint64_t want = 0;
      for (std::int64_t i = 0; i < n; ++i) {
        T const v = pattern == 0 ? lo : pattern == 1 ? hi : pattern == 2 ? (i % 2 ? lo : hi) : static_cast<T>(gen());
        x[static_cast<std::size_t>(i)] = v;
        want += static_cast<std::uint64_t>(static_cast<Acc>(v));
      }
      for (auto a : fusekit::all_reduce_algorithms) {
        if (a == fusekit::reduce_algorithm::naive_atomic && n > 8193) { continue; }
        Acc const got = fusekit::sum(fusekit::cpu{}, span<const T>(x), a);
        EXPECT_EQ(static_cast<std::uint64_t>(got), want)
            << "n " << n << " pattern " << pattern << " algorithm " << static_cast<int>(a);
      }
    }
  }
}

TEST(CpuSum, IntegersOfEveryWidthAtTheirExtremesSumExactly) {
  integers_at_their_extremes_sum_exactly<std::int8_t>();
  integers_at_their_extremes_sum_exactly<std::uint8_t>();
  integers_at_their_extremes_sum_exactly<std::int16_t>();
  integers_at_their_extremes_sum_exactly<std::uint16_t>();
  integers_at_their_extremes_sum_exactly<std::int32_t>();
  integers_at_their_extremes_sum_exactly<std::uint32_t>();
  integers_at_their_extremes_sum_exactly<std::int64_t>();
  integers_at_their_extremes_sum_exactly<std::uint64_t>();
}

TEST(CpuSum, SpecialValuesPropagateAsIeeeAdditionSays) {
  for (auto a : fusekit::all_reduce_algorithms) {
    std::vector<float> x(20000, 1.0f);
    EXPECT_EQ(fusekit::sum(fusekit::cpu{}, span<const float>(), a), 0.0f);
    x[123] = INFINITY;
    EXPECT_EQ(fusekit::sum(fusekit::cpu{}, span<const float>(x), a), INFINITY) << fusekit::to_string(a);
    x[19999] = -INFINITY;
    EXPECT_TRUE(fusekit::test::is_nan(fusekit::sum(fusekit::cpu{}, span<const float>(x), a))) << fusekit::to_string(a);
    x[123] = 1.0f;
    x[19999] = NAN;
    EXPECT_TRUE(fusekit::test::is_nan(fusekit::sum(fusekit::cpu{}, span<const float>(x), a))) << fusekit::to_string(a);
  }
}

TEST(CpuTransformReduce, DotSumOfSquaresAndHiddenLayer) {
  std::size_t const n = 300007;
  auto const a = signed_values<double>(n, 11);
  auto const b = signed_values<double>(n, 12);
  long double dot = 0;
  long double abs_dot = 0;
  for (std::size_t i = 0; i < n; ++i) {
    dot += static_cast<long double>(a[i]) * b[i];
    abs_dot += fabsl(static_cast<long double>(a[i]) * b[i]);
  }
  for (auto alg : fusekit::all_reduce_algorithms) {
    double got = 0;
    fusekit::transform_reduce_sum(fusekit::cpu{}, &got, alg, fusekit::weigh{}, span<const double>(a),
                                  span<const double>(b));
    EXPECT_LE(fabsl(got - dot), cpu_bound<double>(alg, n, abs_dot, dot) + abs_dot * 0x1p-53L)
        << fusekit::to_string(alg);
  }
  // Sum of squares through a lambda; the default (deterministic) host-value form.
  double const squares = fusekit::transform_reduce(
      fusekit::cpu{}, [](double x) { return x * x; }, span<const double>(a));
  long double sq = 0;
  for (double v : a) { sq += static_cast<long double>(v) * v; }
  EXPECT_LE(fabsl(squares - sq), 1e-12L * sq);
  // The hidden layer summed in one pass equals the tree sum of its output.
  auto const grey = fusekit::test::make_greyscales<std::uint8_t>(n, 13);
  auto const w = fusekit::test::make_weights<float>(n, 14);
  std::vector<float> out(n);
  fusekit::hidden_layer(fusekit::cpu{}, span<const std::uint8_t>(grey), span<const float>(w), span<float>(out));
  double const layer_sum =
      fusekit::transform_reduce(fusekit::cpu{}, reduce_algorithm::deterministic, fusekit::accumulate_in<double>{},
                                fusekit::make_hidden_layer(), span<const std::uint8_t>(grey), span<const float>(w));
  double const out_sum = fusekit::sum(fusekit::cpu{}, span<const float>(out), reduce_algorithm::deterministic,
                                      fusekit::accumulate_in<double>{});
  // Elements may differ by the contraction of the two CPU code paths (≤ 2 · 1.6 ulp each).
  EXPECT_NEAR(layer_sum, out_sum, 4e-7 * static_cast<double>(n));
}

template <class F>
void expect_invalid(F f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "not rejected";
  } catch (const fusekit::invalid_argument& e) {
    for (const auto& needle : needles) { EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what(); }
  }
}

TEST(CpuSumArguments, Rejected) {
  std::vector<float> x(64, 1.0f);
  float out = -7.0f;
  expect_invalid(
      [&] { fusekit::reduce_sum(fusekit::cpu{}, span<const float>(static_cast<const float*>(nullptr), 4), &out); },
      {"reduce_sum", "in", "null"});
  expect_invalid([&] { fusekit::reduce_sum(fusekit::cpu{}, span<const float>(x), static_cast<float*>(nullptr)); },
                 {"out is null"});
  expect_invalid([&] { fusekit::reduce_sum(fusekit::cpu{}, span<const float>(x), x.data() + 5); }, {"out overlaps in"});
  expect_invalid(
      [&] {
        fusekit::transform_reduce_sum(fusekit::cpu{}, &out, reduce_algorithm::run_to_run, fusekit::weigh{},
                                      span<const float>(x), span<const float>(x).first(3));
      },
      {"transform_reduce_sum", "ins[1]", "same size"});
  EXPECT_EQ(out, -7.0f);
}

// The bits of the pinned sums (tests/common/pinned_sums.hpp), recorded before
// the tree was vectorized: every build variant of this file must give them.
TEST(DeterministicTree, PinnedBitsOfEveryType) {
  std::vector<std::string> const got = fusekit::test::pinned::results();
  ASSERT_EQ(got.size(), std::size(fusekit::test::pinned::recorded));
  for (std::size_t k = 0; k < got.size(); ++k) { EXPECT_EQ(got[k], fusekit::test::pinned::recorded[k]); }
}

}  // namespace
