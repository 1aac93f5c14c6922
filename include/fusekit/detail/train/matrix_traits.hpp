// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What `fit` and `predict` (train.hpp) ask of the views they are given: a
/// rank-2, row-major (layout_right), plain-accessor `cuda::std::mdspan` of any
/// index type, converted to `fusekit::matrix`; the element-type rules with
/// one message per broken rule; and the strided or column-major views that
/// are rejected at compile time.

#include <fusekit/train_types.hpp>

#include <cuda/std/mdspan>

#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace train {

template <class M>
struct is_mdspan : std::false_type {};
template <class T, class E, class L, class A>
struct is_mdspan<::cuda::std::mdspan<T, E, L, A>> : std::true_type {};

template <class M>
struct is_not_row_major : std::false_type {};
template <class T, class E, class L, class A>
struct is_not_row_major<::cuda::std::mdspan<T, E, L, A>>
    : std::bool_constant<!std::is_same_v<L, ::cuda::std::layout_right>> {};

/// Whether `Ms` are mdspans and one of them is not row-major (layout_right).
template <class... Ms>
inline constexpr bool any_not_row_major_v = (is_mdspan<Ms>::value && ...) && (is_not_row_major<Ms>::value || ...);

template <class...>
inline constexpr bool always_false_v = false;

/// A rank-2, row-major, plain-accessor mdspan (any element and index type).
template <class M>
struct is_row_major_matrix : std::false_type {};
template <class T, class E, class A>
struct is_row_major_matrix<::cuda::std::mdspan<T, E, ::cuda::std::layout_right, A>>
    : std::bool_constant<E::rank() == 2 && std::is_same_v<A, ::cuda::std::default_accessor<T>>> {};

template <class... Ms>
inline constexpr bool all_row_major_v = (is_row_major_matrix<Ms>::value && ...);

/// Whether (R1, R2, Wr) is already the core signature (matrix<const T>, matrix<const T>, matrix<T>);
/// false, without an error, where Wr is no matrix at all.
template <class R1, class R2, class Wr, class = void>
struct is_core_signature : std::false_type {};
template <class R1, class R2, class Wr>
struct is_core_signature<R1, R2, Wr, std::void_t<typename Wr::element_type>>
    : std::bool_constant<std::is_same_v<Wr, matrix<typename Wr::element_type>> &&
                         !std::is_const_v<typename Wr::element_type> &&
                         std::is_same_v<R1, matrix<const typename Wr::element_type>> &&
                         std::is_same_v<R2, matrix<const typename Wr::element_type>>> {};
template <class R1, class R2, class Wr>
inline constexpr bool is_core_signature_v = is_core_signature<R1, R2, Wr>::value;

/// Whether one of `Ms` is no mdspan at all (a std::vector, a pointer): fit and
/// predict then say how to wrap it, in one message.
template <class... Ms>
inline constexpr bool any_not_mdspan_v = (!is_mdspan<Ms>::value || ...);

template <class U, class M>
matrix<U> as_matrix(const M& m) {
  return matrix<U>(m.data_handle(), static_cast<std::int64_t>(m.extent(0)), static_cast<std::int64_t>(m.extent(1)));
}

/// The element-type rules of fit and predict, one message per broken rule.
template <class R1, class R2, class Wr>
constexpr bool matrices_usable(const char*) {
  using T = std::remove_cv_t<typename Wr::element_type>;
  static_assert(!std::is_const_v<typename Wr::element_type>,
                "fusekit::fit / predict: the written matrix (W for fit, Y_hat for predict) must be a view of "
                "writable memory: fusekit::matrix<T>, not matrix<const T>");
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "fusekit::fit / predict: the matrices hold float or double");
  static_assert(std::is_same_v<std::remove_cv_t<typename R1::element_type>, T>,
                "fusekit::fit / predict: X must have the written matrix's element type (all float or all double)");
  static_assert(std::is_same_v<std::remove_cv_t<typename R2::element_type>, T>,
                "fusekit::fit / predict: Y (fit) or W (predict) must have the written matrix's element type (all "
                "float or all double)");
  constexpr bool floating = std::is_same_v<T, float> || std::is_same_v<T, double>;
  return !std::is_const_v<typename Wr::element_type> && floating &&
         std::is_same_v<std::remove_cv_t<typename R1::element_type>, T> &&
         std::is_same_v<std::remove_cv_t<typename R2::element_type>, T>;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
