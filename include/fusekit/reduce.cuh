// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// GPU backend of the sum reductions (see reduce.hpp for the contract, the
/// algorithms and their error bounds).
///
/// Temporary storage (CUB's, and the deterministic tree's partial sums past
/// 8192 values) comes from the caller's workspace when one is given — then a
/// call allocates nothing and can be captured in a CUDA graph — and otherwise
/// from `cudaMallocAsync` on the policy's stream.

#include <fusekit/detail/launch.cuh>
#include <fusekit/detail/reduce_source.hpp>
#include <fusekit/detail/reduce_tree.hpp>
#include <fusekit/reduce.hpp>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {

template <class Acc>
__device__ inline void atomic_add(Acc* out, Acc v) {
  if constexpr (std::is_integral_v<Acc>) {
    static_assert(sizeof(Acc) == sizeof(unsigned long long), "integer sums accumulate in 64 bits");
    // Two's complement: the unsigned add is the signed add, wrapping alike.
    atomicAdd(reinterpret_cast<unsigned long long*>(out), static_cast<unsigned long long>(v));
  } else {
    atomicAdd(out, v);
  }
}

/// The user's baseline: every element is its own atomicAdd on one address.
template <class Acc, class Src>
__global__ void naive_atomic_kernel(Src src, std::int64_t n, Acc* out) {
  for (std::int64_t i = global_thread_id(); i < n; i += grid_stride()) { atomic_add(out, src(i)); }
}

inline constexpr int block_atomic_threads = 1024;

/// Grid-stride sums per thread (8 loads in flight), one cub::BlockReduce, one
/// atomicAdd per block. Large blocks keep the atomics few: their rounding, in
/// an order that changes run to run, dominates the error of a float sum.
template <class Acc, class Src>
__global__ void __launch_bounds__(block_atomic_threads) block_atomic_kernel(Src src, std::int64_t n, Acc* out) {
  constexpr int unroll = 8;
  std::int64_t const stride = grid_stride();
  std::int64_t i = global_thread_id();
  Acc acc = Acc(0);
  for (; i + (unroll - 1) * stride < n; i += unroll * stride) {
    Acc v[unroll];
#pragma unroll
    for (int u = 0; u < unroll; ++u) { v[u] = src(i + u * stride); }
#pragma unroll
    for (int u = 0; u < unroll; ++u) { acc += v[u]; }
  }
  for (; i < n; i += stride) { acc += src(i); }
  using block_reduce = cub::BlockReduce<Acc, block_atomic_threads>;
  __shared__ typename block_reduce::TempStorage temp;
  Acc const total = block_reduce(temp).Sum(acc);
  if (threadIdx.x == 0) { atomic_add(out, total); }
}

/// One level of the deterministic tree: the sum of each 8192-value tile, in the
/// order of detail/reduce_tree.hpp, whatever the grid.
template <class Acc, class Src>
__global__ void __launch_bounds__(tree_lanes) tree_level_kernel(Src src, std::int64_t n, Acc* partials) {
  __shared__ Acc lanes[tree_lanes];
  int const l = static_cast<int>(threadIdx.x);
  std::int64_t const tiles = tree_level_size(n);
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    std::int64_t const base = t * tree_tile + l;
    Acc v[tree_per_lane];
    if ((t + 1) * tree_tile <= n) {
#pragma unroll
      for (int k = 0; k < tree_per_lane; ++k) { v[k] = src(base + std::int64_t{k} * tree_lanes); }
    } else {
      // Missing elements add +0, which is the same as skipping them (a lane sum is never −0).
#pragma unroll
      for (int k = 0; k < tree_per_lane; ++k) {
        std::int64_t const i = base + std::int64_t{k} * tree_lanes;
        v[k] = i < n ? src(i) : Acc(0);
      }
    }
    Acc acc = Acc(0);
#pragma unroll
    for (int k = 0; k < tree_per_lane; ++k) { acc = add_rn(acc, v[k]); }
    lanes[l] = acc;
    __syncthreads();
    for (int s = tree_lanes / 2; s >= 32; s /= 2) {
      if (l < s) { lanes[l] = add_rn(lanes[l], lanes[l + s]); }
      __syncthreads();
    }
    if (l < 32) {
      Acc x = lanes[l];
#pragma unroll
      for (int s = 16; s >= 1; s /= 2) { x = add_rn(x, __shfl_down_sync(0xffffffffu, x, s)); }
      if (l == 0) { partials[t] = x; }
    }
    __syncthreads();  // lanes is reused by the next tile
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

template <class Acc, class Src>
std::size_t cub_temp_bytes(const Src& src, std::int64_t n) {
  std::size_t bytes = 0;
  FUSEKIT_CUDA_TRY(cub::DeviceReduce::Reduce(nullptr, bytes, cub_input(src), static_cast<Acc*>(nullptr), n,
                                             ::cuda::std::plus<Acc>{}, Acc(0)));
  return bytes;
}

inline constexpr std::size_t workspace_alignment = 256;

constexpr std::size_t align_up(std::size_t bytes) {
  return (bytes + workspace_alignment - 1) / workspace_alignment * workspace_alignment;
}

/// Partial sums the tree keeps past its first level (two ping-pong levels).
template <class Acc>
constexpr std::size_t tree_temp_bytes(std::int64_t n) {
  std::int64_t const m1 = tree_level_size(n);
  if (m1 <= 1) { return 0; }
  std::int64_t const m2 = tree_level_size(m1);
  return align_up(static_cast<std::size_t>(m1) * sizeof(Acc)) + static_cast<std::size_t>(m2) * sizeof(Acc);
}

/// Temporary bytes `algorithm` needs for n values of `src`, plus alignment slack.
template <class Acc, class Src>
std::size_t reduce_temp_bytes(const Src& src, std::int64_t n, reduce_algorithm algorithm) {
  std::size_t bytes = 0;
  if (algorithm == reduce_algorithm::cub && n > 0) { bytes = cub_temp_bytes<Acc>(src, n); }
  if (algorithm == reduce_algorithm::deterministic) { bytes = tree_temp_bytes<Acc>(n); }
  return bytes == 0 ? 0 : bytes + workspace_alignment;
}

/// Device memory for temporaries: the caller's workspace, or stream-ordered.
class temp_storage {
 public:
  temp_storage(std::size_t bytes, ::cuda::std::span<std::byte> workspace, cudaStream_t stream, const char* function)
      : stream_(stream) {
    if (bytes == 0) { return; }
    if (workspace.data() != nullptr) {
      FUSEKIT_EXPECTS(workspace.size() >= bytes, std::string(function) + ": workspace has " +
                                                     std::to_string(workspace.size()) + " bytes but needs " +
                                                     std::to_string(bytes) + " (ask reduce_sum_workspace_bytes)");
      auto const p = reinterpret_cast<std::uintptr_t>(workspace.data());
      data_ = reinterpret_cast<std::byte*>((p + workspace_alignment - 1) / workspace_alignment * workspace_alignment);
    } else {
      FUSEKIT_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&owned_), bytes, stream));
      data_ = reinterpret_cast<std::byte*>(
          (reinterpret_cast<std::uintptr_t>(owned_) + workspace_alignment - 1) / workspace_alignment * workspace_alignment);
    }
  }
  temp_storage(const temp_storage&) = delete;
  temp_storage& operator=(const temp_storage&) = delete;
  ~temp_storage() {
    if (owned_ != nullptr) { FUSEKIT_CUDA_TRY_NO_THROW(cudaFreeAsync(owned_, stream_)); }
  }
  [[nodiscard]] std::byte* data() const { return data_; }

 private:
  cudaStream_t stream_;
  std::byte* owned_ = nullptr;
  std::byte* data_ = nullptr;
};

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

template <class Acc, class Src>
void gpu_tree_sum(const Src& src, std::int64_t n, Acc* out, std::byte* temp, cudaStream_t stream, int grid_override) {
  std::int64_t m = tree_level_size(n);
  Acc* const buffers[2] = {reinterpret_cast<Acc*>(temp),
                           reinterpret_cast<Acc*>(temp + align_up(static_cast<std::size_t>(m) * sizeof(Acc)))};
  Acc* level = m == 1 ? out : buffers[0];
  auto const first = tree_level_kernel<Acc, Src>;
  launch(first, tree_grid(first, n, grid_override), tree_lanes, 0, stream, src, n, level);
  for (int b = 1; m > 1; b ^= 1) {
    std::int64_t const next = tree_level_size(m);
    Acc* const dst = next == 1 ? out : buffers[b];
    auto const kernel = tree_level_kernel<Acc, array_source<Acc, Acc>>;
    launch(kernel, tree_grid(kernel, m, grid_override), tree_lanes, 0, stream, array_source<Acc, Acc>{level}, m, dst);
    level = dst;
    m = next;
  }
}

/// Sums n values of `src` into *out with `algorithm`. `grid_override` (> 0)
/// fixes the grid of the atomic and tree kernels; tests use it to show that the
/// deterministic result does not depend on it.
template <class Acc, class Src>
void gpu_reduce(const cuda& policy, const Src& src, std::int64_t n, Acc* out, reduce_algorithm algorithm,
                ::cuda::std::span<std::byte> workspace, const char* function, int grid_override = 0) {
  cudaStream_t const stream = policy.stream;
  temp_storage const temp(reduce_temp_bytes<Acc>(src, n, algorithm), workspace, stream, function);
  if (n == 0) {
    FUSEKIT_CUDA_TRY(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
    return;
  }
  switch (algorithm) {
    case reduce_algorithm::naive_atomic: {
      FUSEKIT_CUDA_TRY(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
      auto const kernel = naive_atomic_kernel<Acc, Src>;
      launch(kernel, reduce_grid(kernel, n, default_block_size, grid_override), default_block_size, 0, stream, src, n,
             out);
      break;
    }
    case reduce_algorithm::block_atomic: {
      FUSEKIT_CUDA_TRY(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
      auto const kernel = block_atomic_kernel<Acc, Src>;
      launch(kernel, reduce_grid(kernel, n, block_atomic_threads, grid_override), block_atomic_threads, 0, stream, src,
             n, out);
      break;
    }
    case reduce_algorithm::cub: {
      std::size_t bytes = cub_temp_bytes<Acc>(src, n);
      FUSEKIT_CUDA_TRY(cub::DeviceReduce::Reduce(temp.data(), bytes, cub_input(src), out, n, ::cuda::std::plus<Acc>{},
                                                 Acc(0), stream));
      break;
    }
    case reduce_algorithm::deterministic:
      gpu_tree_sum(src, n, out, temp.data(), stream, grid_override);
      break;
  }
}

template <class T, class Acc>
void run_reduce_sum(reduce_tag, const cuda& policy, ::cuda::std::span<T> in, Acc* out, reduce_algorithm algorithm,
                    ::cuda::std::span<std::byte> workspace = {}) {
  check_reduce("fusekit::reduce_sum", in, out);
  if (workspace.data() != nullptr) {
    named_range const w = describe("workspace", workspace);
    expect_disjoint("fusekit::reduce_sum", w, describe("in", in));
    expect_disjoint("fusekit::reduce_sum", w, named_range{"out", reinterpret_cast<std::uintptr_t>(out), 1, sizeof(Acc)});
  }
  gpu_reduce(policy, array_source<Acc, std::remove_cv_t<T>>{in.data()}, static_cast<std::int64_t>(in.size()), out,
             algorithm, workspace, "fusekit::reduce_sum");
}

template <class Acc, class Op, class... Ins>
void run_transform_reduce_sum(reduce_tag, const cuda& policy, Acc* out, reduce_algorithm algorithm, const Op& op,
                              ::cuda::std::span<Ins>... ins) {
  std::int64_t const n = check_transform_reduce("fusekit::transform_reduce_sum", out, ins...);
  gpu_reduce(policy, make_transform_source<Acc>(op, ins...), n, out, algorithm, {}, "fusekit::transform_reduce_sum");
}

/// Runs `reduce` into a stream-ordered device scalar and returns its value (synchronizes).
template <class Acc, class F>
Acc device_scalar_result(const cuda& policy, F reduce) {
  Acc* d = nullptr;
  FUSEKIT_CUDA_TRY(cudaMallocAsync(reinterpret_cast<void**>(&d), sizeof(Acc), policy.stream));
  Acc h{};
  try {
    reduce(d);
    FUSEKIT_CUDA_TRY(cudaMemcpyAsync(&h, d, sizeof(Acc), cudaMemcpyDeviceToHost, policy.stream));
  } catch (...) {
    FUSEKIT_CUDA_TRY_NO_THROW(cudaFreeAsync(d, policy.stream));
    throw;
  }
  FUSEKIT_CUDA_TRY(cudaFreeAsync(d, policy.stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  return h;
}

template <class Acc, class T>
Acc run_sum(reduce_tag tag, accumulate_in<Acc>, const cuda& policy, ::cuda::std::span<T> in,
            reduce_algorithm algorithm) {
  check_accumulator<T, Acc>();
  check_sum_inputs("fusekit::sum", reduce_input(in));
  return device_scalar_result<Acc>(policy, [&](Acc* d) { run_reduce_sum(tag, policy, in, d, algorithm); });
}

template <class Acc, class Op, class... Ins>
Acc run_transform_reduce(reduce_tag tag, accumulate_in<Acc>, const cuda& policy, reduce_algorithm algorithm,
                         const Op& op, ::cuda::std::span<Ins>... ins) {
  check_transform_accumulator<Acc>();
  check_sum_inputs("fusekit::transform_reduce", transform_reduce_inputs(ins...));
  return device_scalar_result<Acc>(
      policy, [&](Acc* d) { run_transform_reduce_sum(tag, policy, d, algorithm, op, ins...); });
}

}  // namespace detail

/// Bytes of workspace `reduce_sum` needs for n values of T summed in Acc with
/// `algorithm` (0 for the atomic algorithms).
template <class T, class Acc = accumulator_t<T>>
std::size_t reduce_sum_workspace_bytes(std::size_t n, reduce_algorithm algorithm) {
  detail::check_accumulator<T, Acc>();
  return detail::reduce_temp_bytes<Acc>(detail::array_source<Acc, std::remove_cv_t<T>>{nullptr},
                                        static_cast<std::int64_t>(n), algorithm);
}

/// `reduce_sum` on the GPU with a caller-supplied workspace of at least
/// `reduce_sum_workspace_bytes<T, Acc>(in.size(), algorithm)` bytes of device
/// memory: allocates nothing, so it can be captured in a CUDA graph.
template <class T, class Acc>
void reduce_sum(const cuda& policy, ::cuda::std::span<T> in, Acc* out, reduce_algorithm algorithm,
                ::cuda::std::span<std::byte> workspace) {
  detail::run_reduce_sum(detail::reduce_tag{}, policy, in, out, algorithm, workspace);
}

}  // namespace fusekit
