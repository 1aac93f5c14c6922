// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The reductions' kernels: the atomic baselines, and the deterministic tree's
/// level, which is indices around the tile function the CPU runs
/// (detail/reduce/tree.hpp) on a block_team.

#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/team/block_team.cuh>
#include <fusekit/detail/reduce/atomics.hpp>
#include <fusekit/detail/reduce/tree.hpp>
#include <fusekit/reduce_types.hpp>
#include <fusekit/tuning.hpp>

#include <cub/block/block_reduce.cuh>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace reduce {

/// *out = op(*out, v) as one atomic (op has one: see atomic_op). Integers go
/// through the unsigned or signed type of their width that CUDA's atomics take.
template <class Op, class Acc>
__device__ inline void atomic_combine(Acc* out, Acc v, Op) {
  if constexpr (std::is_floating_point_v<Acc>) {
    atomicAdd(out, v);  // only plus has an atomic on floating types
  } else {
    using U = std::conditional_t<sizeof(Acc) == 8, unsigned long long, unsigned>;
    using S = std::conditional_t<sizeof(Acc) == 8, long long, int>;
    using W = std::conditional_t<std::is_signed_v<Acc>, S, U>;
    if constexpr (std::is_same_v<Op, plus>) {
      // Two's complement: the unsigned add is the signed add, wrapping alike.
      atomicAdd(reinterpret_cast<U*>(out), static_cast<U>(v));
    } else if constexpr (std::is_same_v<Op, minimum>) {
      atomicMin(reinterpret_cast<W*>(out), static_cast<W>(v));
    } else {
      atomicMax(reinterpret_cast<W*>(out), static_cast<W>(v));
    }
  }
}

/// *out = v: how a GPU reduction starts from init (or ends, for no values).
template <class Acc>
__global__ void store_kernel(Acc* out, Acc v) {
  *out = v;
}

/// The user's baseline: every element is its own atomic on one address.
template <class Acc, class Src, class Op>
__global__ void naive_atomic_kernel(Src src, Op op, std::int64_t n, Acc* out) {
  for (std::int64_t i = global_thread_id(); i < n; i += grid_stride()) { atomic_combine(out, src(i), op); }
}

inline constexpr int block_atomic_threads = reduce_launch::block_atomic_threads;

/// Grid-stride partials per thread (8 loads in flight), one cub::BlockReduce,
/// one atomic per block. Large blocks keep the atomics few: their rounding, in
/// an order that changes run to run, dominates the error of a float sum.
template <class Acc, class Src, class Op>
__global__ void __launch_bounds__(block_atomic_threads) block_atomic_kernel(Src src, Op op, std::int64_t n, Acc* out) {
  constexpr int unroll = 8;
  std::int64_t const stride = grid_stride();
  std::int64_t i = global_thread_id();
  Acc acc = atomic_op<Op, Acc>::identity();
  for (; i + (unroll - 1) * stride < n; i += unroll * stride) {
    Acc v[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u) { v[u] = src(i + u * stride); }
#pragma unroll
    for (int u = 0; u < unroll; ++u) { acc = op(acc, v[u]); }
  }
  for (; i < n; i += stride) { acc = op(acc, src(i)); }
  using block_reduce = cub::BlockReduce<Acc, block_atomic_threads>;
  __shared__ typename block_reduce::TempStorage temp;
  Acc const total = block_reduce(temp).Reduce(acc, op);
  if (threadIdx.x == 0) { atomic_combine(out, total, op); }
}

inline constexpr int tree_min_blocks_per_sm = reduce_launch::tree_min_blocks_per_sm;

/// One level of the deterministic tree: block b reduces tiles b, b + gridDim.x,
/// ... with the tile function the CPU runs (detail/reduce/tree.hpp). The last
/// level (one tile) writes op(init, result) when `last`.
template <class Acc, class Src, class Op>
__global__ void __launch_bounds__(tree_lanes, tree_min_blocks_per_sm)
    tree_level_kernel(Src src, Op op, std::int64_t n, Acc* partials, bool last, Acc init) {
  __shared__ Acc lanes[tree_lanes];
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  for (std::int64_t t = blockIdx.x; t < tree_level_size(n); t += gridDim.x) {
    Acc const total = tree_tile_reduce<Acc>(team, lanes, src, op, t, n);
    if (team.leader()) { partials[t] = last ? op(init, total) : total; }
  }
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
