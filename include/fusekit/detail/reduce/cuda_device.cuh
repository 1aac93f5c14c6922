// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU reduction over device memory (detail/reduce/cuda.cuh adds the
/// workspaces and the hook): the temporaries of each algorithm, the grids, the deterministic tree's levels,
/// and `cuda_reduce`, the one place the GPU decides between the algorithms.

#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/reduce/kernels.cuh>
#include <fusekit/detail/team/block_team.cuh>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/reduce/checks.hpp>
#include <fusekit/detail/reduce/reduction.hpp>
#include <fusekit/detail/reduce/source.hpp>
#include <fusekit/detail/reduce/tree.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {
inline namespace reduce {

/// `run_to_run` on the GPU is CUB's DeviceReduce: `device_reduce_pass<run_to_run>`,
/// defined in detail/reduce/cuda_cub.cuh, which <fusekit/run_to_run.cuh>
/// includes. Only that algorithm needs CUB's device headers (about a second of
/// nvcc time per translation unit), so the other algorithms do not parse
/// them. Without the header a call that takes `run_to_run` on the GPU fails
/// to compile with this message.
template <class A>
struct device_reduce_pass {
  template <class Acc, class... Args>
  static std::size_t temp_bytes(const Args&...) {
    static_assert(sizeof(A) == 0,
                  "fusekit::run_to_run on the GPU is CUB's DeviceReduce: include <fusekit/run_to_run.cuh> (or "
                  "<fusekit/fusekit.cuh>)");
    return 0;
  }
  template <class... Args>
  static void run(const Args&...) {
    static_assert(sizeof(A) == 0,
                  "fusekit::run_to_run on the GPU is CUB's DeviceReduce: include <fusekit/run_to_run.cuh> (or "
                  "<fusekit/fusekit.cuh>)");
  }
};

/// Partial sums the tree keeps past its first level (two ping-pong levels).
template <class Acc>
constexpr std::size_t tree_temp_bytes(std::int64_t n) {
  std::int64_t const m1 = tree_level_size(n);
  if (m1 <= 1) { return 0; }
  std::int64_t const m2 = tree_level_size(m1);
  return align_up(static_cast<std::size_t>(m1) * sizeof(Acc)) + static_cast<std::size_t>(m2) * sizeof(Acc);
}

/// Temporary bytes the algorithm A needs for n values of `src` (without alignment slack).
template <class Acc, class Src, class Op, class A>
std::size_t reduce_temp_bytes(const Src& src, const Op& op, std::int64_t n, A) {
  if constexpr (std::is_same_v<A, run_to_run>) {
    return n > 0 ? device_reduce_pass<A>::template temp_bytes<Acc>(src, op, n) : 0;
  } else if constexpr (std::is_same_v<A, deterministic>) {
    return tree_temp_bytes<Acc>(n);
  } else {
    return 0;
  }
}

/// How `cuda_reduce` sizes its grids. This default asks the device: a kernel
/// in which each thread takes one value gets the blocks resident at once
/// (resident_grid), a tree level one block per tile (tree_level_grid). A test
/// passes its own grids as cuda_reduce's last argument, the way CUB's dispatch
/// takes its kernel source and launcher factory (a typed argument with a
/// default), to show that the deterministic bits do not depend on the grid;
/// production calls name nothing.
struct device_grids {
  /// Grid of a kernel in which each thread takes one of n values.
  template <class... Params>
  int flat(void (*kernel)(Params...), std::int64_t n, int block) const {
    return resident_grid(kernel, n, block);
  }
  /// Grid of one tree level over n values.
  template <class... Params>
  int tree_level(void (*kernel)(Params...), std::int64_t n) const {
    int const device = current_device();
    return tree_level_grid(n, attributes_of(device).sm_count,
                           resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), tree_lanes, 0, device));
  }
};

/// The tree's two ping-pong levels in `temp` (tree_temp_bytes of them), for
/// a first level of `tiles` partials; none when `temp` is null.
template <class Acc>
std::array<Acc*, 2> tree_level_buffers(std::byte* temp, std::int64_t tiles) {
  if (temp == nullptr) { return {nullptr, nullptr}; }
  return {reinterpret_cast<Acc*>(temp),
          reinterpret_cast<Acc*>(temp + align_up(static_cast<std::size_t>(tiles) * sizeof(Acc)))};
}

/// The tree's levels past the first, over the m values of its first level in
/// buffers[0] (tree_level_buffers).
template <class Acc, class Op, class Grids>
void cuda_tree_upper_levels(const std::array<Acc*, 2>& buffers, std::int64_t m, const Op& op, Acc* out, Acc init,
                            cudaStream_t stream, const Grids& grids) {
  Acc* level = buffers[0];
  for (int b = 1; m > 1; b ^= 1) {
    std::int64_t const next = tree_level_size(m);
    Acc* const dst = next == 1 ? out : buffers[b];
    auto const kernel = tree_level_kernel<Acc, array_source<Acc, Acc>, Op>;
    launch(kernel, grids.tree_level(kernel, m), tree_lanes, 0, stream, array_source<Acc, Acc>{level}, op, m, dst,
           next == 1, init);
    level = dst;
    m = next;
  }
}

/// Where the first pass of each algorithm writes (reduce_first_pass).
template <class Acc>
struct first_pass_targets {
  Acc* out;               ///< the atomic kernels add into the result (set to init before)
  Acc* cub_out;           ///< CUB's result over these values, from cub_init
  Acc cub_init;           ///< plus's 0 for a chunk, else the reduction's init
  std::byte* cub_temp;    ///< CUB's scratch ...
  std::size_t cub_bytes;  ///< ... and its size
  Acc* tree_out;          ///< the tree's first level: one partial per tile, or the result itself ...
  bool tree_last;         ///< ... when the values are one tile
};

/// The first pass of the algorithm A over the n values of `src` on stream `s`:
/// the one place the GPU chooses between the algorithms, at compile time, so
/// a call compiles the kernels of its own algorithm only. `cuda_reduce` runs
/// it once over its input, the host-data pipeline once per chunk
/// (cuda_anywhere.cuh); the tree's upper levels, or CUB's pass over the
/// chunks, come after.
template <class Acc, class Src, class Op, class A, class Grids>
void reduce_first_pass(const cuda& policy, cudaStream_t s, const Src& src, std::int64_t n, A, const Op& op, Acc init,
                       const first_pass_targets<Acc>& to, const Grids& grids) {
  if constexpr (std::is_same_v<A, naive_atomic>) {
    auto const kernel = naive_atomic_kernel<Acc, Src, Op>;
    int const block = tuning_of(policy).elementwise.block_threads;
    launch(kernel, grids.flat(kernel, n, block), block, 0, s, src, op, n, to.out);
  } else if constexpr (std::is_same_v<A, block_atomic>) {
    auto const kernel = block_atomic_kernel<Acc, Src, Op>;
    launch(kernel, grids.flat(kernel, n, block_atomic_threads), block_atomic_threads, 0, s, src, op, n, to.out);
  } else if constexpr (std::is_same_v<A, run_to_run>) {
    device_reduce_pass<A>::run(to.cub_temp, to.cub_bytes, src, to.cub_out, n, op, to.cub_init, s);
  } else if constexpr (std::is_same_v<A, deterministic>) {
    auto const kernel = tree_level_kernel<Acc, Src, Op>;
    launch(kernel, grids.tree_level(kernel, n), tree_lanes, 0, s, src, op, n, to.tree_out, to.tree_last, init);
  }
}

/// *out = init ⊕ the n values of `src` with the algorithm A (checked by the
/// caller), the atomic and tree kernels on the grids `grids` gives (device_grids).
template <class Acc, class Src, class Op, class A, class Grids = device_grids>
void cuda_reduce(const cuda& policy, const Src& src, std::int64_t n, Acc* out, A algorithm, const Op& op, Acc init,
                 workspace_arena* arena = nullptr, const Grids& grids = {}) {
  cudaStream_t const stream = policy.stream;
  std::size_t const temp_bytes = reduce_temp_bytes<Acc>(src, op, n, algorithm);
  stream_buffer<std::byte> const temp(policy, static_cast<std::int64_t>(temp_bytes), arena);
  if (n == 0 || is_atomic_algorithm_v<A>) { launch(store_kernel<Acc>, 1, 1, 0, stream, out, init); }
  if (n == 0) { return; }
  std::int64_t const tiles = tree_level_size(n);
  constexpr bool tree = std::is_same_v<A, deterministic>;
  std::array<Acc*, 2> const buffers = tree_level_buffers<Acc>(tree ? temp.get() : nullptr, tiles);
  reduce_first_pass(
      policy, stream, src, n, algorithm, op, init,
      first_pass_targets<Acc>{out, out, init, temp.get(), temp_bytes, tiles == 1 ? out : buffers[0], tiles == 1},
      grids);
  if constexpr (tree) { cuda_tree_upper_levels(buffers, tiles, op, out, init, stream, grids); }
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
