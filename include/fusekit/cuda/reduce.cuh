// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of the sum reductions (contract, algorithms and error bounds in
/// reduce.hpp).
///
/// Temporaries (CUB's, and the deterministic tree's partial sums past 8192
/// values) come from the caller's workspace when one is given — then a call
/// allocates nothing and can be captured in a CUDA graph — and otherwise from
/// the policy's memory resource (cuda/buffer.cuh).

#include <fusekit/cuda/buffer.cuh>
#include <fusekit/cuda/launch.cuh>
#include <fusekit/cuda/team.cuh>
#include <fusekit/detail/dispatch.hpp>
#include <fusekit/detail/reduce_checks.hpp>
#include <fusekit/detail/reduce_source.hpp>
#include <fusekit/detail/reduce_tree.hpp>
#include <fusekit/policy.hpp>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda/std/span>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {

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

inline constexpr int block_atomic_threads = 1024;

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

/// One level of the deterministic tree: block b reduces tiles b, b + gridDim.x,
/// ... with the tile function the CPU runs (detail/reduce_tree.hpp). The last
/// level (one tile) writes op(init, result) when `last`.
template <class Acc, class Src, class Op>
__global__ void __launch_bounds__(tree_lanes)
    tree_level_kernel(Src src, Op op, std::int64_t n, Acc* partials, bool last, Acc init) {
  __shared__ Acc lanes[tree_lanes];
  __shared__ double scratch[block_team_scratch];
  block_team const team(scratch);
  for (std::int64_t t = blockIdx.x; t < tree_level_size(n); t += gridDim.x) {
    Acc const total = tree_tile_reduce<Acc>(team, lanes, src, op, t, n);
    if (team.leader()) { partials[t] = last ? op(init, total) : total; }
  }
}

template <class Acc>
struct convert_to {
  template <class T>
  FUSEKIT_HD Acc operator()(T x) const { return convert<Acc>(x); }
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
  FUSEKIT_CUDA_TRY(cub::DeviceReduce::Reduce(nullptr, bytes, cub_input(src), static_cast<Acc*>(nullptr), n,
                                             cub_op<Acc>(op), Acc{}));
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

template <class Acc, class Src, class Op>
void gpu_tree_reduce(const Src& src, const Op& op, std::int64_t n, Acc* out, Acc init, std::byte* temp,
                     cudaStream_t stream, int grid_override) {
  std::int64_t m = tree_level_size(n);
  Acc* const buffers[2] = {reinterpret_cast<Acc*>(temp),
                           reinterpret_cast<Acc*>(temp + align_up(static_cast<std::size_t>(m) * sizeof(Acc)))};
  Acc* level = m == 1 ? out : buffers[0];
  auto const first = tree_level_kernel<Acc, Src, Op>;
  launch(first, tree_grid(first, n, grid_override), tree_lanes, 0, stream, src, op, n, level, m == 1, init);
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

/// *out = init ⊕ the n values of `src` with `algorithm` (checked by the
/// caller). `grid_override` (> 0) fixes the grid of the atomic and tree
/// kernels; tests use it to show that the deterministic result does not depend on it.
template <class Acc, class Src, class Op>
void gpu_reduce(const cuda& policy, const Src& src, std::int64_t n, Acc* out, reduce_algorithm algorithm, const Op& op,
                Acc init, ::cuda::std::span<std::byte> workspace, const char* function, int grid_override = 0) {
  cudaStream_t const stream = policy.stream;
  std::size_t const temp_bytes = reduce_temp_bytes<Acc>(src, op, n, algorithm);
  stream_buffer<std::byte> const temp(policy, static_cast<std::int64_t>(temp_bytes), workspace, function);
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
      launch(kernel, reduce_grid(kernel, n, block_atomic_threads, grid_override), block_atomic_threads, 0, stream,
             src, op, n, out);
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

template <class T, class Acc>
void run(reduce_sum_tag, const cuda& policy, ::cuda::std::span<T> in, Acc* out, reduce_algorithm algorithm,
         ::cuda::std::span<std::byte> workspace = {}) {
  check_reduce("fusekit::reduce_sum", in, out);
  check_reduce_algorithm<plus, Acc>("fusekit::reduce_sum", algorithm);
  if (workspace.data() != nullptr) {
    named_range const w = describe("workspace", workspace);
    expect_disjoint("fusekit::reduce_sum", w, describe("in", in));
    expect_disjoint("fusekit::reduce_sum", w, named_range{"out", reinterpret_cast<std::uintptr_t>(out), 1, sizeof(Acc)});
  }
  gpu_reduce(policy, array_source<Acc, std::remove_cv_t<T>>{in.data()}, static_cast<std::int64_t>(in.size()), out,
             algorithm, plus{}, Acc(0), workspace, "fusekit::reduce_sum");
}

template <class Acc, class Op, class... Ins>
void run(transform_reduce_sum_tag, const cuda& policy, Acc* out, reduce_algorithm algorithm, const Op& op,
         ::cuda::std::span<Ins>... ins) {
  std::int64_t const n = check_transform_reduce("fusekit::transform_reduce_sum", out, ins...);
  check_reduce_algorithm<plus, Acc>("fusekit::transform_reduce_sum", algorithm);
  gpu_reduce(policy, make_transform_source<Acc>(op, ins...), n, out, algorithm, plus{}, Acc(0), {},
             "fusekit::transform_reduce_sum");
}

template <class T, class Acc, class Op>
void run(reduce_tag, const cuda& policy, ::cuda::std::span<T> in, Acc* out, const Op& op, Acc init,
         reduce_algorithm algorithm) {
  check_reduce_views("fusekit::reduce", in, out);
  check_reduce_algorithm<Op, Acc>("fusekit::reduce", algorithm);
  gpu_reduce(policy, array_source<Acc, std::remove_cv_t<T>>{in.data()}, static_cast<std::int64_t>(in.size()), out,
             algorithm, op, init, {}, "fusekit::reduce");
}

/// A host value from a call that writes it: a device scalar, copied back (synchronizes).
template <class R, class Enqueue>
R run(scalar_result_tag, const cuda& policy, accumulate_in<R>, const Enqueue& enqueue) {
  return device_scalar_result<R>(policy, enqueue);
}

}  // namespace detail

/// Bytes of workspace `reduce_sum` needs for n values of T summed in Acc with
/// `algorithm` (0 for the atomic algorithms).
template <class T, class Acc = accumulator_t<T>>
std::size_t reduce_sum_workspace_bytes(std::size_t n, reduce_algorithm algorithm) {
  detail::check_accumulator<T, Acc>();
  std::size_t const bytes = detail::reduce_temp_bytes<Acc>(detail::array_source<Acc, std::remove_cv_t<T>>{nullptr},
                                                           plus{}, static_cast<std::int64_t>(n), algorithm);
  return bytes == 0 ? 0 : bytes + detail::workspace_alignment;
}

/// `reduce_sum` on the GPU with a caller-supplied workspace of at least
/// `reduce_sum_workspace_bytes<T, Acc>(in.size(), algorithm)` bytes of device
/// memory: allocates nothing, so it can be captured in a CUDA graph.
template <class T, class Acc>
void reduce_sum(const cuda& policy, ::cuda::std::span<T> in, Acc* out, reduce_algorithm algorithm,
                ::cuda::std::span<std::byte> workspace) {
  detail::run(detail::reduce_sum_tag{}, policy, in, out, algorithm, workspace);
}

}  // namespace fusekit
