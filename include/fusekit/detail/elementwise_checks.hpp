// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Argument validation of `transform` and the layers built on it, shared by
/// every backend.

#include <fusekit/detail/numeric.hpp>
#include <fusekit/detail/validate.hpp>

#include <cuda/std/span>

#include <cstddef>
#include <type_traits>

namespace fusekit {
namespace detail {

/// Who is calling and what its views are called, for error messages.
struct call_site {
  const char* function;
  const char* names[5];  ///< out, then the inputs
};

inline constexpr call_site transform_site{"fusekit::transform", {"out", "ins[0]", "ins[1]", "ins[2]", "ins[3]"}};

template <class T>
inline constexpr bool is_output_element_v =
    std::is_same_v<T, float> || std::is_same_v<T, double> || is_half_type_v<T>;

/// nvcc's extended `__device__` lambdas: callable on the device only, so the
/// host cannot check their signature.
#if defined(__CUDACC_EXTENDED_LAMBDA__)
template <class Op>
inline constexpr bool is_device_lambda_v = __nv_is_extended_device_lambda_closure_type(Op);
#else
template <class Op>
inline constexpr bool is_device_lambda_v = false;
#endif

template <class Out, class Op, class... Ins>
void check_transform(const call_site& site, ::cuda::std::span<Out> out, ::cuda::std::span<Ins>... ins) {
  static_assert(sizeof...(Ins) >= 1 && sizeof...(Ins) <= 4, "fusekit::transform takes 1 to 4 inputs");
  static_assert(!std::is_const_v<Out>, "fusekit::transform: out must be a view of writable memory");
  static_assert(is_output_element_v<Out>,
                "fusekit::transform writes float, double, __half or __nv_bfloat16; convert integer results "
                "yourself");
  static_assert((is_supported_element_v<Ins> && ...),
                "fusekit::transform: unsupported input element type. Use float, double, __half, "
                "__nv_bfloat16 or an integer type");
  static_assert(is_device_lambda_v<Op> || std::is_invocable_v<const Op&, Ins&...>,
                "fusekit::transform: op must be callable with one element of each input, in order");
  named_range const o = describe(site.names[0], out);
  expect_not_null(site.function, o);
  expect_aligned(site.function, o);
  std::size_t k = 1;
  named_range const in_ranges[] = {describe(site.names[k++], ins)...};
  for (const auto& in : in_ranges) {
    expect_not_null(site.function, in);
    expect_aligned(site.function, in);
    expect_same_size(site.function, in, o);
    expect_in_place_or_disjoint(site.function, o, in);
  }
}

}  // namespace detail
}  // namespace fusekit
