// SPDX-License-Identifier: Apache-2.0
// Property-based tests of the reductions (sum, reduce) on the CPU, with
// RapidCheck: each property states the promise it checks (the bits, the
// bound, the status, or the error and nothing written) against an
// independent reference, on generated shapes (0, 1, tile edges ± 1), data
// (NaN, ±inf, ±0, subnormals, spread units) and options (at and past their
// limits). A failure shrinks to a small case and prints it.
//
// Case count and seed: RC_PARAMS, e.g. RC_PARAMS="seed=2026 max_success=100"
// (ctest's `test` preset: a fixed seed; the `nightly` test preset runs 100×).
#include <fusekit/fusekit.hpp>

#include "common/property_generators.hpp"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace {

using fusekit::reduce_algorithm;
using fusekit::test::floats;
using fusekit::test::ieee_minimum;
using fusekit::test::lengths;
using fusekit::test::same_value;
using fusekit::test::tile;

// reduce with an op that is not idempotent (xor: a value taken twice cancels):
// every algorithm the CPU takes and any thread count give the fold of init
// and every value, for any length.
RC_GTEST_PROP(ReduceProperties, ReduceWithXorIsTheFoldOfEveryValueOnce, ()) {
  std::int64_t const n = *lengths();
  auto const values =
      *rc::gen::container<std::vector<std::int32_t>>(static_cast<std::size_t>(n), rc::gen::arbitrary<std::int32_t>());
  std::int64_t const init = *rc::gen::arbitrary<std::int64_t>();
  int const threads = *rc::gen::inRange(1, 5);
  std::int64_t want = init;
  for (std::int32_t v : values) { want ^= v; }
  auto const op = [](std::int64_t a, std::int64_t b) { return a ^ b; };
  for (auto a : {reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {
    std::int64_t got = 0;
    fusekit::reduce(fusekit::cpu{threads}, ::cuda::std::span<const std::int32_t>(values), &got, op, init, a);
    RC_ASSERT(got == want);
  }
}

// minimum and maximum propagate NaN and order −0 below +0 (IEEE 754-2019),
// with the same bits on every algorithm and thread count.
RC_GTEST_PROP(ReduceProperties, MinimumIsIeeeMinimumOnEveryAlgorithm, ()) {
  std::int64_t const n = *lengths();
  auto const values = *rc::gen::container<std::vector<float>>(static_cast<std::size_t>(n), floats());
  float const init = *floats();
  int const threads = *rc::gen::inRange(1, 5);
  float want = init;
  for (float v : values) { want = ieee_minimum(want, v); }
  for (auto a : {reduce_algorithm::run_to_run, reduce_algorithm::deterministic}) {  // the atomics take integer min only
    float got = 1.0f;
    fusekit::reduce(fusekit::cpu{threads}, ::cuda::std::span<const float>(values), &got, fusekit::minimum{}, init, a);
    RC_ASSERT(same_value(got, want));
  }
}

// Integers sum exactly, into 64 bits, on every algorithm and thread count.
RC_GTEST_PROP(ReduceProperties, IntegerSumsAreExact, ()) {
  std::int64_t const n = *lengths();
  auto const values =
      *rc::gen::container<std::vector<std::int32_t>>(static_cast<std::size_t>(n), rc::gen::arbitrary<std::int32_t>());
  int const threads = *rc::gen::inRange(1, 5);
  std::int64_t const want = std::accumulate(values.begin(), values.end(), std::int64_t{0});
  for (auto a : fusekit::all_reduce_algorithms) {
    RC_ASSERT((fusekit::sum(fusekit::cpu{threads}, values, a, fusekit::accumulate_in<std::int64_t>{})) == want);
  }
}

// The deterministic float sum: the same bits for any thread count; NaN when
// a NaN or both infinities are in; an infinity when one of them alone is (the
// finite values far from overflow).
RC_GTEST_PROP(ReduceProperties, DeterministicSumIsTheSameForAnyThreadCountAndIeeeOnSpecials, ()) {
  std::int64_t const n = *lengths();
  auto const values = *rc::gen::container<std::vector<float>>(static_cast<std::size_t>(n), floats(false));
  float const one = fusekit::sum(fusekit::cpu{1}, values);
  for (int threads = 2; threads <= 4; ++threads) {
    RC_ASSERT(same_value(fusekit::sum(fusekit::cpu{threads}, values), one));
  }
  bool const nan = std::any_of(values.begin(), values.end(), [](float v) { return std::isnan(v); });
  bool const plus = std::count(values.begin(), values.end(), INFINITY) > 0;
  bool const minus = std::count(values.begin(), values.end(), -INFINITY) > 0;
  if (nan || (plus && minus)) { RC_ASSERT(std::isnan(one)); }
  if (!nan && plus != minus) { RC_ASSERT(one == (plus ? INFINITY : -INFINITY)); }
}

}  // namespace
