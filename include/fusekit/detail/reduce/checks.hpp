// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The argument checks of the sums, shared by every backend: accumulator
/// rules at compile time, then the views (non-null, aligned, one size, out
/// apart from every input) before anything runs.

#include <fusekit/detail/reduce/atomics.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/reduce/source.hpp>
#include <fusekit/detail/core/checks.hpp>
#include <fusekit/error.hpp>
#include <fusekit/reduce_types.hpp>

#include <cuda/std/span>
#include <cuda/std/tuple>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace reduce {

/// Which accumulators a sum of T may use.
template <class T, class Acc>
constexpr void check_accumulator() {
  using U = std::remove_cv_t<T>;
  if constexpr (is_integer_element_v<U>) {
    static_assert(std::is_same_v<Acc, accumulator_t<U>>,
                  "fusekit: integers sum in a 64-bit integer: int64_t for signed, uint64_t for unsigned inputs");
  } else if constexpr (std::is_same_v<U, double>) {
    static_assert(std::is_same_v<Acc, double>, "fusekit: double input sums in double");
  } else {
    static_assert(std::is_same_v<Acc, float> || std::is_same_v<Acc, double>,
                  "fusekit: float, __half and __nv_bfloat16 inputs sum in float (default) or double");
  }
}

/// The views of a sum: 1 to 4 inputs (`in`, or `ins[0]` ... for transform_reduce).
struct sum_views {
  named_range ranges[4];
  std::size_t count;
};

template <class T>
sum_views reduce_input(::cuda::std::span<T> in) {
  return {{describe("in", in)}, 1};
}

template <class... Ins>
sum_views transform_reduce_inputs(::cuda::std::span<Ins>... ins) {
  static_assert(sizeof...(Ins) >= 1 && sizeof...(Ins) <= 4, "fusekit::transform_reduce takes 1 to 4 inputs");
  static_assert((is_supported_element_v<Ins> && ...),
                "fusekit::transform_reduce: unsupported input element type. Use float, double, __half, "
                "__nv_bfloat16 or an integer type");
  const char* const names[] = {"ins[0]", "ins[1]", "ins[2]", "ins[3]"};
  std::size_t k = 0;
  return {{describe(names[k++], ins)...}, sizeof...(Ins)};
}

/// One validation for every sum: the inputs non-null, aligned and of one size.
/// Returns the number of values.
inline std::int64_t check_sum_inputs(const char* function, const sum_views& v) {
  for (std::size_t k = 0; k < v.count; ++k) {
    expect_not_null(function, v.ranges[k]);
    expect_aligned(function, v.ranges[k]);
    expect_same_size(function, v.ranges[k], v.ranges[0]);
  }
  return static_cast<std::int64_t>(v.ranges[0].size);
}

/// ... and for a sum written to `out`: out non-null, aligned and sharing no
/// byte with any input.
template <class Acc>
std::int64_t check_sum_views(const char* function, const Acc* out, const sum_views& v) {
  std::int64_t const n = check_sum_inputs(function, v);
  named_range const o{"out", reinterpret_cast<std::uintptr_t>(out), 1, sizeof(Acc)};
  FUSEKIT_EXPECTS(out != nullptr, std::string(function) + ": out is null; it must point to one " +
                                      std::to_string(sizeof(Acc)) + "-byte accumulator");
  expect_aligned(function, o);
  for (std::size_t k = 0; k < v.count; ++k) { expect_disjoint(function, o, v.ranges[k]); }
  return n;
}

/// The views of a reduction of `in` into *out.
template <class T, class Acc>
void check_reduce_views(const char* function, ::cuda::std::span<T> in, const Acc* out) {
  check_sum_views(function, out, reduce_input(in));
}

template <class T, class Acc>
void check_reduce(const char* function, ::cuda::std::span<T> in, const Acc* out) {
  check_accumulator<T, Acc>();
  check_reduce_views(function, in, out);
}

/// Accumulators of a transform_reduce: float, double or a 64-bit integer.
template <class Acc>
constexpr void check_transform_accumulator() {
  static_assert(std::is_same_v<Acc, float> || std::is_same_v<Acc, double> || std::is_same_v<Acc, std::int64_t> ||
                    std::is_same_v<Acc, std::uint64_t>,
                "fusekit::transform_reduce: the accumulator is float, double, int64_t or uint64_t (narrower "
                "integers would wrap long before a sum of many values ends)");
}

/// Checks a transform_reduce written to `out`; returns the number of values.
template <class Acc, class... Ins>
std::int64_t check_transform_reduce(const char* function, const Acc* out, ::cuda::std::span<Ins>... ins) {
  check_transform_accumulator<Acc>();
  return check_sum_views(function, out, transform_reduce_inputs(ins...));
}

/// Accumulators of a `reduce`: float, double or a 32- or 64-bit integer, and
/// an integer accumulator for integer inputs only.
template <class T, class Acc>
constexpr void check_reduce_accumulator() {
  static_assert(is_supported_element_v<T>,
                "fusekit::reduce: unsupported input element type. Use float, double, __half, __nv_bfloat16 or an "
                "integer type");
  static_assert(std::is_same_v<Acc, float> || std::is_same_v<Acc, double> ||
                    (std::is_integral_v<Acc> && !std::is_same_v<Acc, bool> && sizeof(Acc) >= 4),
                "fusekit::reduce: the accumulator (out's type) is float, double or a 32- or 64-bit integer");
  static_assert(!std::is_integral_v<Acc> || is_integer_element_v<std::remove_cv_t<T>>,
                "fusekit::reduce: floating-point input reduces in float or double");
}

template <class Acc, class Op, class... Ins>
transform_source<Acc, Op, std::remove_cv_t<Ins>...> make_transform_source(const Op& op, ::cuda::std::span<Ins>... ins) {
  return {op, ::cuda::std::tuple<const std::remove_cv_t<Ins>*...>(ins.data()...)};
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
