// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CPU team, `serial_team`: one thread plays every member of the team
/// contract (detail/team/team.hpp). `for_each` is a SIMD loop, `sum` adds in
/// index order, and `column_reduce` runs row by row, each row a SIMD loop
/// across the lanes, or, for plus, minimum and maximum, in explicit SIMD
/// vectors (detail/team/cpu_columns.hpp).

#include <fusekit/config.hpp>
#include <fusekit/detail/team/cpu_columns.hpp>
#include <fusekit/detail/team/cpu_simd.hpp>
#include <fusekit/detail/team/team.hpp>

#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace team {

/// The CPU team: one thread, indices in order. `VectorBytes`: the width of
/// the host vectors its column pass uses (detail/team/cpu_columns.hpp): 16, or 32
/// in code compiled for AVX2 (detail/reduce/cpu.hpp dispatches the tree's tiles over
/// arrays so); 0, row loops the compiler may vectorize.
template <int VectorBytes>
struct basic_serial_team {
  template <class F>
  FUSEKIT_HD FUSEKIT_FORCEINLINE void for_each(std::int64_t n, const F& f) const {
    FUSEKIT_SIMD_LOOP
    for (std::int64_t i = 0; i < n; ++i) { f(i); }
  }

  template <class R, class F>
  FUSEKIT_HD FUSEKIT_FORCEINLINE R sum(std::int64_t n, const F& f) const {
    R s = R(0);
    for (std::int64_t i = 0; i < n; ++i) { s = s + f(i); }
    return s;
  }

  /// out[l] = Σ value(r, l) over r < rows, in row order from R(0), for l < lanes.
  /// Four rows a pass over the lanes (one load and store of out[l] for four
  /// additions, in row order, so the bits of the one-row loop).
  template <class R, class Value>
  FUSEKIT_HD FUSEKIT_FORCEINLINE void column_sums(std::int64_t rows, std::int64_t lanes, R* out,
                                                  const Value& value) const {
    FUSEKIT_SIMD_LOOP
    for (std::int64_t l = 0; l < lanes; ++l) { out[l] = R(0); }
    std::int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {
      FUSEKIT_SIMD_LOOP
      for (std::int64_t l = 0; l < lanes; ++l) {
        out[l] = (((out[l] + value(r, l)) + value(r + 1, l)) + value(r + 2, l)) + value(r + 3, l);
      }
    }
    for (; r < rows; ++r) {
      FUSEKIT_SIMD_LOOP
      for (std::int64_t l = 0; l < lanes; ++l) { out[l] = out[l] + value(r, l); }
    }
  }

  /// Rows ⊕-combined down each of the lanes l < count(0), in row order; row r
  /// has its first count(r) lanes (count non-increasing in r). `access`: the
  /// tile's tile_access (detail/reduce/source.hpp), value(r, l) being element
  /// r · count(0) + l from its base; only the vector pass uses it.
  template <int Rows, class Acc, class Count, class Value, class Op, class Access>
  FUSEKIT_HD FUSEKIT_FORCEINLINE void column_reduce(Acc* lane, const Count& count, const Value& value, const Op& op,
                                                    const Access& access) const {
    (void)access;
#if FUSEKIT_SIMD_VECTORS
    if constexpr (VectorBytes > 0 && vector_columns<Op, Acc>) {
#if defined(__x86_64__)
      if constexpr (VectorBytes == 32) {
        cpu_column_reduce_avx2<Rows, Op>(lane, count, value, access);
        return;
      }
#endif
      cpu_column_reduce<16, Rows, Op>(lane, count, value, access);
      return;
    }
#endif
    std::int64_t const first = count(0);
    FUSEKIT_SIMD_LOOP
    for (std::int64_t l = 0; l < first; ++l) { lane[l] = value(0, l); }
    for (int r = 1; r < Rows; ++r) {
      std::int64_t const c = count(r);
      FUSEKIT_SIMD_LOOP
      for (std::int64_t l = 0; l < c; ++l) { lane[l] = op(lane[l], value(r, l)); }
    }
  }

  /// lane[l] = op(lane[l], lane[l + s]) for l < pairs (pairs ≤ s).
  template <class Acc, class Op>
  FUSEKIT_HD FUSEKIT_FORCEINLINE void combine_pairs(Acc* lane, std::int64_t pairs, std::int64_t s, const Op& op) const {
#if FUSEKIT_SIMD_VECTORS
    if constexpr (VectorBytes > 0 && vector_columns<Op, Acc>) {
#if defined(__x86_64__)
      if constexpr (VectorBytes == 32) {
        cpu_combine_pairs_avx2<Op>(lane, pairs, s);
        return;
      }
#endif
      cpu_combine_pairs<16, Op>(lane, pairs, s);
      return;
    }
#endif
    for_each(pairs, [&](std::int64_t l) { lane[l] = op(lane[l], lane[l + s]); });
  }

  FUSEKIT_HD void sync() const {}
  FUSEKIT_HD constexpr bool leader() const { return true; }
};

/// The CPU team of every body but the tree's tiles over arrays: row loops.
using serial_team = basic_serial_team<0>;

/// Whether Team is one thread running indices in order (basic_serial_team): a
/// body may then take its independent chains several at a time, in the same
/// order each, where other teams split them over members.
template <class Team>
inline constexpr bool is_serial_team_v = false;
template <int VectorBytes>
inline constexpr bool is_serial_team_v<basic_serial_team<VectorBytes>> = true;

}  // namespace team
}  // namespace detail
}  // namespace fusekit
