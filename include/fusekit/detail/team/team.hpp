// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Teams: how one algorithm body runs on every backend.
///
/// The bodies shared by the CPU and the GPU (the descent step, the power
/// iteration, the deterministic tree's tile) are written once against a
/// *team*: the members that work on one output or one tile together. A team
/// offers four things:
///
/// | member             | meaning                                                        |
/// |--------------------|----------------------------------------------------------------|
/// | `for_each(n, f)`   | f(i) for every i < n; the calls are independent               |
/// | `sum<R>(n, f)`     | Σ f(i) over i < n in R, in a fixed order; every member gets it |
/// | `column_sums<R>(rows, lanes, out, value)` | out[l] = Σ_r value(r, l), r in order from R(0), for l < lanes |
/// | `column_reduce<R>(lane, count, value, op)` | lane[l] = value(0, l) ⊕ value(1, l) ⊕ ... ⊕ value(R−1, l), row r only
/// where l < count(r) | | `sync()`           | what a member wrote is seen by every member after this         | |
/// `leader()`         | true for exactly one member                                    |
///
/// Each member takes the same indices in `for_each` and `sum`, so a value a
/// member wrote in one is read by the same member in the next without `sync`.
///
/// `serial_team` (here) is the CPU's: one thread plays every member, `sum`
/// adds in index order, `for_each` is a SIMD loop and `column_reduce` runs
/// row by row, each row a SIMD loop across the lanes (for plus, min and max,
/// host vectors of lanes taking 8 rows at a time: detail/team/host_columns.hpp). `block_team`
/// (detail/team/block_team.cuh) is a CUDA thread block: member t takes i = t, t + blockDim,
/// ...; `sum` is cub::WarpReduce per warp, then the warp sums in warp order;
/// in `column_reduce` member l loads its R values first (R loads in flight;
/// 8 at a time for 8-byte accumulators, to bound the registers), then
/// combines them in row order. Either way each lane combines the same
/// values in the same order: the result is the same bits.

#include <fusekit/config.hpp>
#include <fusekit/detail/team/host_columns.hpp>

#include <cstdint>

#if FUSEKIT_HAS_OPENMP && !FUSEKIT_DEVICE_PASS
#define FUSEKIT_SIMD_LOOP _Pragma("omp simd")
#else
#define FUSEKIT_SIMD_LOOP
#endif

namespace fusekit {
namespace detail {
inline namespace team {

/// The CPU team: one thread, indices in order. `VectorBytes`: the width of
/// the host vectors its column pass uses (detail/team/host_columns.hpp): 16, or 32
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
  template <class R, class Value>
  FUSEKIT_HD FUSEKIT_FORCEINLINE void column_sums(std::int64_t rows, std::int64_t lanes, R* out,
                                                  const Value& value) const {
    FUSEKIT_SIMD_LOOP
    for (std::int64_t l = 0; l < lanes; ++l) { out[l] = R(0); }
    for (std::int64_t r = 0; r < rows; ++r) {
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
#if FUSEKIT_HOST_VECTORS
    if constexpr (VectorBytes > 0 && vector_columns<Op, Acc>) {
#if defined(__x86_64__)
      if constexpr (VectorBytes == 32) {
        host_column_reduce_avx2<Rows, Op>(lane, count, value, access);
        return;
      }
#endif
      host_column_reduce<16, Rows, Op>(lane, count, value, access);
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
#if FUSEKIT_HOST_VECTORS
    if constexpr (VectorBytes > 0 && vector_columns<Op, Acc>) {
#if defined(__x86_64__)
      if constexpr (VectorBytes == 32) {
        host_combine_pairs_avx2<Op>(lane, pairs, s);
        return;
      }
#endif
      host_combine_pairs<16, Op>(lane, pairs, s);
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

/// Element i of an array as a callable: how a backend hands the shared bodies
/// a gradient it holds in memory (a host lambda would not be callable from
/// their __host__ __device__ code under nvcc).
template <class T>
struct element_of {
  const T* data;
  FUSEKIT_HD FUSEKIT_FORCEINLINE T operator()(std::int64_t i) const { return data[i]; }
};

}  // namespace team
}  // namespace detail
}  // namespace fusekit
