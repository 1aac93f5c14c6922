// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The argument checks of `transform` and the layers built on it, shared by
/// every backend.

#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/core/checks.hpp>
#include <fusekit/elementwise_types.hpp>

#include <cuda/std/span>

#include <cstddef>
#include <tuple>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace elementwise {

/// Who is calling and what its views are called, for error messages.
struct call_site {
  const char* function;
  const char* names[5];  ///< out, then the inputs
};

inline constexpr call_site transform_site{"fusekit::transform", {"out", "ins[0]", "ins[1]", "ins[2]", "ins[3]"}};

template <class T>
inline constexpr bool is_output_element_v = std::is_same_v<T, float> || std::is_same_v<T, double> || is_half_type_v<T>;

/// nvcc's extended `__device__` lambdas: callable on the device only, so the
/// host cannot check their signature.
#if defined(__CUDACC_EXTENDED_LAMBDA__)
template <class Op>
inline constexpr bool is_device_lambda_v = __nv_is_extended_device_lambda_closure_type(Op);
#else
template <class Op>
inline constexpr bool is_device_lambda_v = false;
#endif

/// Ops the host cannot call: a `__device__` lambda, a stage wrapping one, a
/// composition holding one. The GPU runs them; the host checks what it can.
template <class Op>
struct is_host_opaque : std::bool_constant<is_device_lambda_v<Op>> {};
template <int N, class F, class R>
struct is_host_opaque<stage<N, F, R>> : is_host_opaque<F> {};
template <class... Stages>
struct is_host_opaque<fused<Stages...>> : std::bool_constant<(is_host_opaque<Stages>::value || ...)> {};
template <class Op>
inline constexpr bool is_host_opaque_v = is_host_opaque<Op>::value;

template <class Op>
struct is_fused : std::false_type {};
template <class... Stages>
struct is_fused<fused<Stages...>> : std::true_type {};

/// Inputs `Op` takes when the first input has type V: a composition's count, a
/// functor's declared arity, or -1 when only a call can tell.
template <class Op, class V>
constexpr int op_inputs() {
  if constexpr (is_fused<Op>::value) {
    return static_cast<int>(Op::template arity<V>);
  } else if constexpr (declared_arity<Op>::value != 0) {
    return declared_arity<Op>::value;
  } else {
    return -1;
  }
}

/// Fails with the two counts in its name: "this_op_takes_inputs<2>::but_given<1>".
template <int Takes>
struct this_op_takes_inputs {
  template <int Given>
  struct but_given {
    static_assert(Takes == Given,
                  "fusekit::transform: the op takes a different number of inputs than the call gives; the counts "
                  "are in the name below: this_op_takes_inputs<takes>::but_given<given>");
    static constexpr bool value = Takes == Given;
  };
};

/// Everything about a transform's types, each failure one message that says
/// what to do; true when the call can be made.
template <class Out, class Op, class... Ins>
constexpr bool transform_usable() {
  static_assert(sizeof...(Ins) >= 1 && sizeof...(Ins) <= 4, "fusekit::transform takes 1 to 4 inputs");
  static_assert(!std::is_const_v<Out>, "fusekit::transform: out must be a view of writable memory");
  static_assert(is_output_element_v<Out>,
                "fusekit::transform writes float, double, __half or __nv_bfloat16; convert integer results "
                "yourself");
  static_assert((is_supported_element_v<Ins> && ...),
                "fusekit::transform: unsupported input element type. Use float, double, __half, "
                "__nv_bfloat16 or an integer type");
  if constexpr (sizeof...(Ins) >= 1) {
    using First = std::remove_cv_t<std::tuple_element_t<0, std::tuple<Ins...>>>;
    constexpr int takes = op_inputs<Op, First>();
    constexpr int given = static_cast<int>(sizeof...(Ins));
    if constexpr (takes >= 0 && takes != given) {
      return typename this_op_takes_inputs<takes>::template but_given<given>{}.value;
    } else {
      // disjunction: the host never instantiates a call it cannot make.
      static_assert(std::disjunction_v<is_host_opaque<Op>, std::is_invocable<const Op&, Ins&...>>,
                    "fusekit::transform: op must be callable with one element of each input, in order");
      return std::disjunction_v<is_host_opaque<Op>, std::is_invocable<const Op&, Ins&...>>;
    }
  } else {
    return false;
  }
}

template <class Out, class Op, class... Ins>
void check_transform(const call_site& site, ::cuda::std::span<Out> out, ::cuda::std::span<Ins>... ins) {
  static_assert(transform_usable<Out, Op, Ins...>());
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

}  // namespace elementwise
}  // namespace detail
}  // namespace fusekit
