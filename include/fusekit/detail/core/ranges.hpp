// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Ranges, the caller's containers as fusekit views: anything contiguous with
/// `data()` and `size()` — `std::vector`, `std::array`, `thrust::host_vector`,
/// `thrust::device_vector` (whose `data()` is a `thrust::device_ptr`),
/// `cuda::std::span` — becomes a `cuda::std::span`, and where the container
/// says which memory it holds, a policy that cannot read that memory is a
/// compile error that says so.

#include <fusekit/detail/core/memory_space.hpp>
#include <fusekit/policy.hpp>

#include <cuda/std/span>

#include <array>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {
inline namespace core {

template <class R>
using data_t = decltype(std::declval<R&>().data());

template <class R, class = void>
struct is_contiguous_range : std::false_type {};
template <class R>
struct is_contiguous_range<R, std::void_t<data_t<R>, decltype(std::declval<R&>().size())>> : std::true_type {};

template <class R>
struct is_span : std::false_type {};
template <class T, std::size_t E>
struct is_span<::cuda::std::span<T, E>> : std::true_type {};

/// A container (not already a span) that fusekit can view.
template <class R>
inline constexpr bool is_container_v = is_contiguous_range<std::remove_reference_t<R>>::value &&
                                       !is_span<std::remove_cv_t<std::remove_reference_t<R>>>::value;

/// The raw pointer of a container's data(): itself, or a fancy pointer's get() (thrust::device_ptr).
template <class P>
auto raw_pointer(P p) {
  if constexpr (std::is_pointer_v<P>) {
    return p;
  } else {
    return p.get();
  }
}

template <class R, class = void>
struct has_std_allocator : std::false_type {};
template <class R>
struct has_std_allocator<R, std::void_t<typename R::allocator_type, typename R::value_type>>
    : std::is_same<typename R::allocator_type, std::allocator<typename R::value_type>> {};

template <class R>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};

/// Which memory a container holds, when its type says: a fancy pointer from
/// data() is device memory (thrust::device_vector), std::allocator or
/// std::array pageable host memory; a span or raw pointer cannot tell.
template <class R>
constexpr memory_space memory_of() {
  using C = std::remove_cv_t<std::remove_reference_t<R>>;
  if constexpr (!is_contiguous_range<C>::value || is_span<C>::value) {
    return memory_space::unknown;
  } else if constexpr (!std::is_pointer_v<data_t<C>>) {
    return memory_space::device;
  } else if constexpr (has_std_allocator<C>::value || is_std_array<C>::value) {
    return memory_space::pageable;
  } else {
    return memory_space::unknown;
  }
}

/// A container's memory checked against the policy: one message that says
/// what to use. `fusekit::cpu` cannot read device memory; `fusekit::cuda`
/// reads device memory only, and `fusekit::cuda_staged` host containers too
/// (through the host-data pipeline).
template <class Policy, class... Rs>
constexpr bool memory_usable() {
  constexpr bool device_on_cpu = std::is_same_v<Policy, cpu> && ((memory_of<Rs>() == memory_space::device) || ...);
  static_assert(!device_on_cpu,
                "fusekit::cpu reads host memory, and a container here holds device memory (e.g. a "
                "thrust::device_vector): use fusekit::cuda{stream}, or copy it to a std::vector");
  constexpr bool host_on_gpu = std::is_same_v<Policy, cuda> && ((memory_of<Rs>() == memory_space::pageable) || ...);
  static_assert(!host_on_gpu,
                "fusekit::cuda reads device memory, and a container here holds host memory (e.g. a std::vector): "
                "use fusekit::cuda_staged{stream} (include <fusekit/host_data.cuh>), which copies it in pipelined "
                "chunks, or fusekit::cpu{}");
  return !device_on_cpu && !host_on_gpu;
}

/// The element type of a container or span (what its view holds).
template <class R>
using range_value_t =
    std::remove_cv_t<std::remove_pointer_t<decltype(raw_pointer(std::declval<std::remove_reference_t<R>&>().data()))>>;

/// A writable view of a container or span.
template <class R>
auto view_of(R&& r) {
  if constexpr (is_span<std::remove_cv_t<std::remove_reference_t<R>>>::value) {
    return r;
  } else {
    // An empty container is not asked for data(): thrust's is &front(), which
    // an empty vector does not have (undefined, and UBSan says so).
    using P = decltype(raw_pointer(r.data()));
    std::size_t const n = static_cast<std::size_t>(r.size());
    P const p = n == 0 ? P{} : raw_pointer(r.data());
    return ::cuda::std::span<std::remove_pointer_t<P>>(p, n);
  }
}

/// A read-only view of a container or span.
template <class R>
auto const_view_of(R&& r) {
  auto const v = view_of(std::forward<R>(r));
  using T = typename decltype(v)::element_type;
  return ::cuda::std::span<const T>(v.data(), v.size());
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
