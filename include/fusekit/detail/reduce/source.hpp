// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What a reduction sums: element i of an array, or op(ins[i]...), converted
/// to the accumulator type. The same source object runs in every GPU kernel,
/// in CUB (through a transform iterator) and in the CPU backend.

#include <fusekit/config.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/core/prefetch.hpp>

#include <cuda/std/tuple>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {
inline namespace reduce {

template <class Acc, class T>
struct array_source {
  const T* data;
  FUSEKIT_HD FUSEKIT_FORCEINLINE Acc operator()(std::int64_t i) const { return convert<Acc>(data[i]); }
};

template <class Src>
inline constexpr bool is_array_source_v = false;
template <class Acc, class T>
inline constexpr bool is_array_source_v<array_source<Acc, T>> = true;

/// A hint that elements [i, i + count) of src are read soon: the cache lines of
/// an array's elements are prefetched on the host; any other source (and the
/// device) ignores it.
template <prefetch_to To = prefetch_to::l1, class Src>
FUSEKIT_HD FUSEKIT_FORCEINLINE void source_prefetch(const Src&, std::int64_t, int) {}

template <prefetch_to To = prefetch_to::l1, class Acc, class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE void source_prefetch(const array_source<Acc, T>& src, std::int64_t i, int count) {
  prefetch_bytes<To>(src.data + i, static_cast<std::int64_t>(count) * static_cast<std::int64_t>(sizeof(T)));
}

/// What the host's vector column pass (detail/team/cpu_columns.hpp) may know of
/// the source of a tile that starts at element `base`: prefetch(i, k) hints
/// that elements base + i, ..., base + i + k − 1 are read soon (also past the
/// tile's end; none at or past element n), into L1; prefetch_far(i, k), that
/// they are read later, into L2. For arrays, values(i) points at element base + i.
///
/// Forced inline: GCC deems a function whose only effect is a prefetch to
/// have none, and drops the calls to it (a lambda here lost every prefetch).
template <class Src>
struct tile_access {
  using value_type = void;
  const Src& src;
  std::int64_t base, n;
  FUSEKIT_HD FUSEKIT_FORCEINLINE void prefetch(std::int64_t, int) const {}
  FUSEKIT_HD FUSEKIT_FORCEINLINE void prefetch_far(std::int64_t, int) const {}
};

template <class Acc, class T>
struct tile_access<array_source<Acc, T>> {
  using value_type = T;
  const array_source<Acc, T>& src;
  std::int64_t base, n;
  FUSEKIT_HD FUSEKIT_FORCEINLINE void prefetch(std::int64_t i, int count) const {
    if (base + i + count <= n) { source_prefetch(src, base + i, count); }
  }
  FUSEKIT_HD FUSEKIT_FORCEINLINE void prefetch_far(std::int64_t i, int count) const {
    if (base + i + count <= n) { source_prefetch<prefetch_to::l2>(src, base + i, count); }
  }
  FUSEKIT_HD FUSEKIT_FORCEINLINE const T* values(std::int64_t i) const { return src.data + base + i; }
};

template <class Acc, class Op, class... Ins>
struct transform_source {
  Op op;
  ::cuda::std::tuple<const Ins*...> ins;

  FUSEKIT_HD FUSEKIT_FORCEINLINE Acc operator()(std::int64_t i) const {
    return at(i, std::index_sequence_for<Ins...>{});
  }

 private:
  template <std::size_t... I>
  FUSEKIT_HD FUSEKIT_FORCEINLINE Acc at(std::int64_t i, std::index_sequence<I...>) const {
    return convert<Acc>(op(::cuda::std::get<I>(ins)[i]...));
  }
};

/// The arrays a source reads, as bytes (`source_arrays`), their element sizes,
/// and the same source over other arrays of those types (`source_over`): the
/// host-data pipeline's device copies, or a shard that starts further on.
template <class Acc, class T>
std::array<const std::byte*, 1> source_arrays(const array_source<Acc, T>& src) {
  return {reinterpret_cast<const std::byte*>(src.data)};
}

template <class Acc, class T>
std::array<std::size_t, 1> source_element_bytes(const array_source<Acc, T>&) {
  return {sizeof(T)};
}

template <class Acc, class T>
array_source<Acc, T> source_over(const array_source<Acc, T>&, const std::array<const std::byte*, 1>& p) {
  return {reinterpret_cast<const T*>(p[0])};
}

template <class Acc, class F, class... Ins>
std::array<const std::byte*, sizeof...(Ins)> source_arrays(const transform_source<Acc, F, Ins...>& src) {
  return ::cuda::std::apply(
      [](const Ins*... p) {
        return std::array<const std::byte*, sizeof...(Ins)>{reinterpret_cast<const std::byte*>(p)...};
      },
      src.ins);
}

template <class Acc, class F, class... Ins>
std::array<std::size_t, sizeof...(Ins)> source_element_bytes(const transform_source<Acc, F, Ins...>&) {
  return {sizeof(Ins)...};
}

template <class Acc, class F, class... Ins, std::size_t... I>
transform_source<Acc, F, Ins...> source_over_at(const transform_source<Acc, F, Ins...>& src,
                                                const std::array<const std::byte*, sizeof...(Ins)>& p,
                                                std::index_sequence<I...>) {
  return {src.op, ::cuda::std::tuple<const Ins*...>(reinterpret_cast<const Ins*>(p[I])...)};
}

template <class Acc, class F, class... Ins>
transform_source<Acc, F, Ins...> source_over(const transform_source<Acc, F, Ins...>& src,
                                             const std::array<const std::byte*, sizeof...(Ins)>& p) {
  return source_over_at(src, p, std::index_sequence_for<Ins...>{});
}

/// The source from element k on.
template <class Src>
Src source_from(const Src& src, std::int64_t k) {
  auto p = source_arrays(src);
  auto const bytes = source_element_bytes(src);
  for (std::size_t i = 0; i < p.size(); ++i) { p[i] += k * static_cast<std::int64_t>(bytes[i]); }
  return source_over(src, p);
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
