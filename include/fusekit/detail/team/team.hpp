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
/// | member | meaning |
/// |--------|---------|
/// | `for_each(n, f)` | f(i) for every i < n; the calls are independent |
/// | `sum<R>(n, f)` | Σ f(i) over i < n in R, in a fixed order; every member gets it |
/// | `column_sums<R>(rows, lanes, out, value)` | out[l] = Σ_r value(r, l), r in order from R(0), for l < lanes |
/// | `column_reduce<R>(lane, count, value, op)` | lane[l] = value(0, l) ⊕ value(1, l) ⊕ ... ⊕ value(R−1, l), row r only where l < count(r) |
/// | `sync()` | what a member wrote is seen by every member after this |
/// | `leader()` | true for exactly one member |
///
/// Each member takes the same indices in `for_each` and `sum`, so a value a
/// member wrote in one is read by the same member in the next without `sync`.
///
/// `serial_team` (detail/team/cpu_team.hpp) is the CPU's: one thread plays every member, `sum`
/// adds in index order, `for_each` is a SIMD loop and `column_reduce` runs
/// row by row, each row a SIMD loop across the lanes (for plus, min and max,
/// host vectors of lanes taking 8 rows at a time: detail/team/cpu_columns.hpp). `block_team`
/// (detail/team/block_team.cuh) is a CUDA thread block: member t takes i = t, t + blockDim,
/// ...; `sum` is cub::WarpReduce per warp, then the warp sums in warp order;
/// in `column_reduce` member l loads its R values first (R loads in flight;
/// 8 at a time for 8-byte accumulators, to bound the registers), then
/// combines them in row order. Either way each lane combines the same
/// values in the same order: the result is the same bits.

#include <fusekit/config.hpp>

#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace team {

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
