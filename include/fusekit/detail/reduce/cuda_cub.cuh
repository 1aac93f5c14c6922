// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `run_to_run` on the GPU: CUB's DeviceReduce, as the specialization
/// `device_reduce_pass<run_to_run>` that `reduce_first_pass` and the staged
/// pipeline call (detail/reduce/cuda_device.cuh declares it). Its own file so
/// that only a translation unit that takes `run_to_run` on the GPU parses
/// CUB's device headers (<fusekit/run_to_run.cuh> includes it).

#include <fusekit/detail/reduce/cuda_device.cuh>
#include <fusekit/detail/reduce/source.hpp>
#include <fusekit/error.hpp>
#include <fusekit/reduce_types.hpp>

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
inline namespace reduce {

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

/// One CUB pass: *out = init ⊕ the n values of `src`, in `temp` (`bytes` of
/// it, from temp_bytes) on `stream`.
template <>
struct device_reduce_pass<run_to_run> {
  template <class Acc, class Src, class Op>
  static std::size_t temp_bytes(const Src& src, const Op& op, std::int64_t n) {
    std::size_t bytes = 0;
    FUSEKIT_CUDA_TRY(cub::DeviceReduce::Reduce(nullptr, bytes, cub_input(src), static_cast<Acc*>(nullptr), n,
                                               cub_op<Acc>(op), Acc{}));
    return bytes;
  }
  template <class Acc, class Src, class Op>
  static void run(std::byte* temp, std::size_t bytes, const Src& src, Acc* out, std::int64_t n, const Op& op, Acc init,
                  cudaStream_t stream) {
    FUSEKIT_CUDA_TRY(cub::DeviceReduce::Reduce(temp, bytes, cub_input(src), out, n, cub_op<Acc>(op), init, stream));
  }
};

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
