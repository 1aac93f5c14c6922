// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU reduction over device memory (detail/reduce/cuda.cuh adds host
/// memory, workspaces and the entry points): what CUB reads and runs, the
/// temporaries of each algorithm, the grids, the deterministic tree's levels,
/// and `gpu_reduce`, the one place the GPU decides between the algorithms.

#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/host_data/cuda_driver.cuh>
#include <fusekit/detail/reduce/kernels.cuh>
#include <fusekit/detail/team/block_team.cuh>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/reduce/checks.hpp>
#include <fusekit/detail/reduce/source.hpp>
#include <fusekit/detail/reduce/tree.hpp>
#include <fusekit/policy.hpp>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda/std/span>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {

template <class Acc>
struct convert_to {
  template <class T>
  FUSEKIT_HD Acc operator()(T x) const {
    return convert<Acc>(x);
  }
};

/// What CUB reads: the raw pointer when no conversion is needed (CUB then
/// vectorizes its loads), a transform iterator otherwise.
template <class Acc, class T>
auto cub_input(const array_source<Acc, T>& src) {
  if constexpr (std::is_same_v<Acc, T>) {
    return src.data;
  } else {
    return thrust::make_transform_iterator(src.data, convert_to<Acc>{});
  }
}

template <class Acc, class Op, class... Ins>
auto cub_input(const transform_source<Acc, Op, Ins...>& src) {
  return thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), src);
}

/// The operation CUB runs: its own plus for a sum (as cub::DeviceReduce::Sum), else op.
template <class Acc, class Op>
auto cub_op(const Op& op) {
  if constexpr (std::is_same_v<Op, plus>) {
    return ::cuda::std::plus<Acc>{};
  } else {
    return op;
  }
}

template <class Acc, class Src, class Op>
std::size_t cub_temp_bytes(const Src& src, const Op& op, std::int64_t n) {
  std::size_t bytes = 0;
  FUSEKIT_CUDA_TRY(
      cub::DeviceReduce::Reduce(nullptr, bytes, cub_input(src), static_cast<Acc*>(nullptr), n, cub_op<Acc>(op), Acc{}));
  return bytes;
}

/// Partial sums the tree keeps past its first level (two ping-pong levels).
template <class Acc>
constexpr std::size_t tree_temp_bytes(std::int64_t n) {
  std::int64_t const m1 = tree_level_size(n);
  if (m1 <= 1) { return 0; }
  std::int64_t const m2 = tree_level_size(m1);
  return align_up(static_cast<std::size_t>(m1) * sizeof(Acc)) + static_cast<std::size_t>(m2) * sizeof(Acc);
}

/// Temporary bytes `algorithm` needs for n values of `src` (without alignment slack).
template <class Acc, class Src, class Op>
std::size_t reduce_temp_bytes(const Src& src, const Op& op, std::int64_t n, reduce_algorithm algorithm) {
  if (algorithm == reduce_algorithm::cub && n > 0) { return cub_temp_bytes<Acc>(src, op, n); }
  if (algorithm == reduce_algorithm::deterministic) { return tree_temp_bytes<Acc>(n); }
  return 0;
}

/// Grid of a kernel in which each thread takes one value; `grid_override` (> 0) wins.
template <class... Params>
int reduce_grid(void (*kernel)(Params...), std::int64_t n, int block, int grid_override) {
  return grid_override > 0 ? grid_override : resident_grid(kernel, n, block);
}

/// Grid of one tree level over n values: one block per tile (tree_level_grid).
template <class... Params>
int tree_grid(void (*kernel)(Params...), std::int64_t n, int grid_override) {
  if (grid_override > 0) { return grid_override; }
  int const device = current_device();
  return tree_level_grid(n, attributes_of(device).sm_count,
                         resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), tree_lanes, 0, device));
}

/// The tree's levels past the first, over the m values of its first level in
/// buffers[0] (buffers as gpu_tree_reduce, below, lays them out in its temporaries).
template <class Acc, class Op>
void gpu_tree_upper_levels(Acc* const (&buffers)[2], std::int64_t m, const Op& op, Acc* out, Acc init,
                           cudaStream_t stream, int grid_override) {
  Acc* level = buffers[0];
  for (int b = 1; m > 1; b ^= 1) {
    std::int64_t const next = tree_level_size(m);
    Acc* const dst = next == 1 ? out : buffers[b];
    auto const kernel = tree_level_kernel<Acc, array_source<Acc, Acc>, Op>;
    launch(kernel, tree_grid(kernel, m, grid_override), tree_lanes, 0, stream, array_source<Acc, Acc>{level}, op, m,
           dst, next == 1, init);
    level = dst;
    m = next;
  }
}

template <class Acc, class Src, class Op>
void gpu_tree_reduce(const Src& src, const Op& op, std::int64_t n, Acc* out, Acc init, std::byte* temp,
                     cudaStream_t stream, int grid_override) {
  std::int64_t const m = tree_level_size(n);
  Acc* const buffers[2] = {reinterpret_cast<Acc*>(temp),
                           reinterpret_cast<Acc*>(temp + align_up(static_cast<std::size_t>(m) * sizeof(Acc)))};
  auto const first = tree_level_kernel<Acc, Src, Op>;
  launch(first, tree_grid(first, n, grid_override), tree_lanes, 0, stream, src, op, n, m == 1 ? out : buffers[0],
         m == 1, init);
  gpu_tree_upper_levels(buffers, m, op, out, init, stream, grid_override);
}

/// *out = init ⊕ the n values of `src` with `algorithm` (checked by the
/// caller). `grid_override` (> 0) fixes the grid of the atomic and tree
/// kernels; tests use it to show that the deterministic result does not depend on it.
template <class Acc, class Src, class Op>
void gpu_reduce(const cuda& policy, const Src& src, std::int64_t n, Acc* out, reduce_algorithm algorithm, const Op& op,
                Acc init, workspace_arena* arena = nullptr, int grid_override = 0) {
  cudaStream_t const stream = policy.stream;
  std::size_t const temp_bytes = reduce_temp_bytes<Acc>(src, op, n, algorithm);
  stream_buffer<std::byte> const temp(policy, static_cast<std::int64_t>(temp_bytes), arena);
  bool const atomic = algorithm == reduce_algorithm::naive_atomic || algorithm == reduce_algorithm::block_atomic;
  if (n == 0 || atomic) { launch(store_kernel<Acc>, 1, 1, 0, stream, out, init); }
  if (n == 0) { return; }
  if constexpr (atomic_op<Op, Acc>::exists) {
    if (algorithm == reduce_algorithm::naive_atomic) {
      auto const kernel = naive_atomic_kernel<Acc, Src, Op>;
      int const block = tuning_of(policy).elementwise.block_threads;
      launch(kernel, reduce_grid(kernel, n, block, grid_override), block, 0, stream, src, op, n, out);
    } else if (algorithm == reduce_algorithm::block_atomic) {
      auto const kernel = block_atomic_kernel<Acc, Src, Op>;
      launch(kernel, reduce_grid(kernel, n, block_atomic_threads, grid_override), block_atomic_threads, 0, stream, src,
             op, n, out);
    }
  }
  if (algorithm == reduce_algorithm::cub) {
    std::size_t bytes = temp_bytes;
    FUSEKIT_CUDA_TRY(
        cub::DeviceReduce::Reduce(temp.get(), bytes, cub_input(src), out, n, cub_op<Acc>(op), init, stream));
  } else if (algorithm == reduce_algorithm::deterministic) {
    gpu_tree_reduce(src, op, n, out, init, temp.get(), stream, grid_override);
  }
}

}  // namespace detail
}  // namespace fusekit
