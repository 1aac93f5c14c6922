// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What a reduction sums: element i of an array, or op(ins[i]...), converted
/// to the accumulator type. The same source object runs in every GPU kernel,
/// in CUB (through a transform iterator) and in the CPU backend.

#include <fusekit/config.hpp>
#include <fusekit/detail/numeric.hpp>

#include <cuda/std/tuple>

#include <cstdint>
#include <utility>

namespace fusekit {
namespace detail {

template <class Acc, class T>
struct array_source {
  const T* data;
  FUSEKIT_HD FUSEKIT_FORCEINLINE Acc operator()(std::int64_t i) const { return convert<Acc>(data[i]); }
};

template <class Src>
inline constexpr bool is_array_source_v = false;
template <class Acc, class T>
inline constexpr bool is_array_source_v<array_source<Acc, T>> = true;

template <class Acc, class Op, class... Ins>
struct transform_source {
  Op op;
  ::cuda::std::tuple<const Ins*...> ins;

  FUSEKIT_HD FUSEKIT_FORCEINLINE Acc operator()(std::int64_t i) const { return at(i, std::index_sequence_for<Ins...>{}); }

 private:
  template <std::size_t... I>
  FUSEKIT_HD FUSEKIT_FORCEINLINE Acc at(std::int64_t i, std::index_sequence<I...>) const {
    return convert<Acc>(op(::cuda::std::get<I>(ins)[i]...));
  }
};

}  // namespace detail
}  // namespace fusekit
