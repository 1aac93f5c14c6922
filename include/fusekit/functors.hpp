// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Elementwise functors and their compile-time composition.
///
/// Every functor is a small struct with a `FUSEKIT_HD` call operator, so the same
/// object runs in the fused GPU kernel, in the unfused chain and in the CPU
/// backend. Each returns its result in the compute type of its arguments
/// (`fusekit::compute_t`, below): uint8_t and `__half` give
/// float, double gives double.
///
/// | functor | computes | numeric contract |
/// |---------|----------|------------------|
/// | `normalize{scale}` | x / scale | one correctly rounded division |
/// | `weigh{}` | x · w | one correctly rounded product |
/// | `tanh_activate{}` | tanh(x) | float: ≤ 1.6 ulp, same code on host and device; double: the platform's tanh; exactly ±1 in the limit; NaN → NaN; never NaN for finite x |
/// | `fast_tanh_activate{}` | tanh(x), hardware approx | device float: relative error ≤ 2^-10.987 (`tanh.approx.f32`); host: as `tanh_activate` |
/// | `sigmoid{}` | 1/(1 + e^−x) | float ≤ 0.5001 ulp, double ≤ 3 ulp; exactly 0 and 1 in the limits |
/// | `silu{}` | x · sigmoid(x) | float ≤ 0.5001 ulp, double ≤ 4 ulp |
/// | `softplus{}` | log(1 + e^x) | float ≤ 0.5001 ulp, double ≤ 3.5 ulp; x itself where that is the rounded result |
/// | `gelu_tanh{}` | x/2 · (1 + tanh(sqrt(2/π)(x + 0.044715 x³))) | float ≤ 0.5001 ulp, double ≤ 4 ulp |
/// | `gelu_erf{}` | x · Φ(x) = x/2 · (1 + erf(x/√2)) | float ≤ 0.5001 ulp, double ≤ 4 ulp |
/// | `relu{}` | max(x, 0) | exact; −0 → +0 |
/// | `leaky_relu{α}` | x, or α·x below 0 | one correctly rounded product; α finite, else `std::invalid_argument` |
///
/// sigmoid, silu, softplus, gelu_tanh and gelu_erf compute in double for float and double
/// alike, with one code on the host and the device in which every multiply-add
/// is written as an explicit FMA (detail/elementwise/activations.hpp): **the
/// CPU and the GPU give the same bits**, and the bounds hold unchanged under
/// host `-ffast-math` and device `--use_fast_math`, except that results below
/// the smallest normal number may flush to ±0 and the sign of a zero is not
/// kept there. A float result is the double one rounded once: within
/// 2^-27 ulp of correctly rounded (the double bounds are ≤ 4 ulp). The
/// bounds are checked in tests/elementwise/activations_test.cpp: floats by a
/// stride through every float and every float of the hard intervals,
/// doubles by sweeps of 200,000 points per range (the worst seen over 3
/// million per range: sigmoid 2.31, silu 2.90, softplus 2.64, gelu_tanh 2.99,
/// gelu_erf 3.06 ulp). NaN gives NaN; ±inf gives the limit. On a CPU without FMA the
/// explicit FMAs run in software (slowly, with the same bits).
///
/// `fuse(s0, s1, ...)` composes stages left to right into one functor. A unary
/// stage takes the running value; a binary stage takes the running value and
/// the next input. The first stage starts from the first input, so
///
///     fuse(normalize{255.f}, weigh{}, tanh_activate{})(grey, w) == tanh((grey / 255) * w)
///
/// and the composed functor takes 1 + (number of binary stages) inputs. A stage
/// that is callable both ways declares `static constexpr int arity = 1` or `2`.
///
/// A `__device__` lambda (nvcc `--extended-lambda`) is a stage too, wrapped so
/// that it declares its arity, which the host cannot ask it:
///
///     auto layer = fusekit::fuse(fusekit::normalize{255.f}, fusekit::weigh{},
///                                fusekit::unary([] __device__ (float x) { return x > 0.f ? x : 0.f; }));
///
/// `unary(f)` / `binary(f)` take the running value's type as the result type;
/// `unary<double>(f)` names another. Such a composition runs on the GPU only.
///
/// **Fast-math builds** (the flags are the user's; fusekit sets none):
///
/// | functor | host `-ffast-math` (gcc, clang) | device `nvcc --use_fast_math` |
/// |---------|---------------------------------|-------------------------------|
/// | `tanh_activate` | float: ≤ 1.6 ulp for normal x (checked for every normal float up to 10, gcc 12 and clang 14, with and without FMA); subnormal x → ±0 (flushed) | float: ≤ 2.6 ulp for normal x (derived: the division becomes approximate, ≤ 2 ulp of a quotient ≤ 1/2, so at most 1 ulp more; a host simulation of that worst case gives 2.47); subnormal x → ±0 |
/// | `normalize` | x · (1/scale): ≤ 1.5 ulp | approximate division: ≤ 2 ulp |
/// | `weigh` | one product | one product |
///
/// A composition adds up: the hidden layer is within 1.6 + 1.5 + 0.5 ulp of the
/// exact layer under host -ffast-math (tanh passes a relative error on at most
/// 1:1), and fused and
/// unfused results may differ there. Subnormal results are flushed to zero,
/// also when narrowing to `__nv_bfloat16`. NaN in gives NaN out in every build:
/// classification is done on the bits (`x != x` and `std::isnan` fold to false
/// under fast-math).
///
/// **Prepared stages.** Before its loop, once per thread, the GPU kernel calls
/// `prepare()` on a stage that declares it (and `fused` prepares each of its
/// stages), then runs what it returns on every element: the place for
/// constants computed once per call rather than once per element. The
/// prepared form must give the same results as the stage. `normalize<float>`
/// prepares its reciprocal, and divides by one product and two FMAs with the
/// bits of the IEEE division (detail/elementwise/divisor.hpp, checked for
/// every significand); a stage of your own may declare a `__host__ __device__`
/// `prepare()` too.
///
/// `mul_rn(a, b)` and `add_rn(a, b)` are one IEEE round-to-nearest product and
/// sum that no compiler fuses into a multiply-add (nvcc does by default with a
/// plain `a * b + c`; the host compiler usually does not): an op written with
/// them gives the same bits on the host and the device (see reduce_api.hpp).

#include <fusekit/config.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/base/rounding.hpp>
#include <fusekit/detail/elementwise/activations.hpp>
#include <fusekit/detail/elementwise/divisor.hpp>
#include <fusekit/detail/elementwise/stages.hpp>
#include <fusekit/detail/elementwise/tanh.hpp>
#include <fusekit/elementwise_types.hpp>

#include <cuda/std/tuple>

#include <cstddef>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace fusekit {

/// The type fusekit computes in for elements of types `Ts...`: double when one
/// of them is double or an integer wider than 16 bits, else float.
template <class... Ts>
using compute_t = typename detail::compute_type<Ts...>::type;

/// Largest error of `tanh_activate` in float, in ulp of the exact result, for
/// normal x: in every host build (-ffast-math included) and on the device by
/// default (measured exhaustively over every float, tests/elementwise/functors_test.cpp).
inline constexpr double tanh_float_max_ulp = 1.6;

/// ... on the device under `nvcc --use_fast_math`, whose approximate division
/// (≤ 2 ulp) adds at most 1 ulp: the quotient 2/(e^{2|x|} + 1) is at most 1/2.
inline constexpr double tanh_float_max_ulp_use_fast_math = 2.6;

/// Largest errors of the activations computed in double (sigmoid, silu,
/// softplus, gelu_tanh, gelu_erf), in ulp of the exact result, on the host in every
/// build and on the device: float over every float, double over sweeps of the
/// hard ranges (tests/elementwise/activations_test.cpp).
inline constexpr double sigmoid_float_max_ulp = 0.5001;
inline constexpr double sigmoid_double_max_ulp = 3;
inline constexpr double silu_float_max_ulp = 0.5001;
inline constexpr double silu_double_max_ulp = 4;
inline constexpr double softplus_float_max_ulp = 0.5001;
inline constexpr double softplus_double_max_ulp = 3.5;
inline constexpr double gelu_tanh_float_max_ulp = 0.5001;
inline constexpr double gelu_tanh_double_max_ulp = 4;
inline constexpr double gelu_erf_float_max_ulp = 0.5001;
inline constexpr double gelu_erf_double_max_ulp = 4;

/// a · b, rounded once, never fused with an addition (float, double, integers wrap).
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T mul_rn(T a, T b) {
  return detail::mul_rn(a, b);
}

/// a + b, rounded once, never fused with a product (float, double, integers wrap).
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T add_rn(T a, T b) {
  return detail::add_rn(a, b);
}

/// x / scale. `normalize{255.0f}` maps greyscales in [0, 255] to [0, 1].
template <class S>
struct normalize {
  static_assert(std::is_floating_point_v<S>, "fusekit::normalize: the scale must be float or double");
  static constexpr int arity = 1;
  S scale;

  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE compute_t<T, S> operator()(T x) const {
    using C = compute_t<T, S>;
    return detail::convert<C>(x) / static_cast<C>(scale);
  }

  /// The form the GPU kernel runs, once per thread before its loop: float
  /// quotients as one product and two FMAs by the reciprocal computed once,
  /// with the bits of x / scale (detail/elementwise/divisor.hpp).
  template <class U = S, std::enable_if_t<std::is_same_v<U, float>, int> = 0>
  FUSEKIT_HD detail::normalize_by_divisor prepare() const {
    return detail::normalize_by_divisor{detail::float_divisor(scale)};
  }
};
template <class S>
normalize(S) -> normalize<S>;

/// x · w: weighs the running value by the next input.
struct weigh {
  static constexpr int arity = 2;

  template <class T, class W>
  FUSEKIT_HD FUSEKIT_FORCEINLINE compute_t<T, W> operator()(T x, W w) const {
    using C = compute_t<T, W>;
    return detail::convert<C>(x) * detail::convert<C>(w);
  }
};

/// Accurate tanh (see the table above). Unlike (e^x − e^−x)/(e^x + e^−x) it never
/// returns NaN for a finite argument.
struct tanh_activate {
  static constexpr int arity = 1;
  /// Largest error for float, in ulp of the exact tanh, for normal x (see the table).
  static constexpr double max_ulp = tanh_float_max_ulp;

  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE compute_t<T> operator()(T x) const {
    return detail::accurate_tanh(detail::convert<compute_t<T>>(x));
  }
};

/// Hardware tanh approximation on the device (float); accurate elsewhere.
struct fast_tanh_activate {
  static constexpr int arity = 1;
  /// Largest relative error against tanh, for float on the device.
  static constexpr double max_relative_error = detail::fast_tanh_max_relative_error;

  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE compute_t<T> operator()(T x) const {
    return detail::fast_tanh(detail::convert<compute_t<T>>(x));
  }
};

/// Activations computed in double and rounded once to the compute type
/// (detail/elementwise/activations.hpp): the same bits on the host and the
/// device, in every build. `Kernel` is the double kernel.
template <double (*Kernel)(double)>
struct double_kernel_activation {
  static constexpr int arity = 1;

  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE compute_t<T> operator()(T x) const {
    using C = compute_t<T>;
    return static_cast<C>(Kernel(static_cast<double>(detail::convert<C>(x))));
  }
};

/// sigmoid(x) = 1/(1 + e^−x). Exactly 0 and 1 in the limits, 1/2 at ±0.
struct sigmoid : double_kernel_activation<detail::sigmoid_double> {
  /// Largest error in ulp of the exact result: float (every float checked), double (swept).
  static constexpr double max_ulp = sigmoid_float_max_ulp;
  static constexpr double max_ulp_double = sigmoid_double_max_ulp;
};

/// silu(x) = x · sigmoid(x) (also called swish). −0 below −1000 in double.
struct silu : double_kernel_activation<detail::silu_double> {
  static constexpr double max_ulp = silu_float_max_ulp;
  static constexpr double max_ulp_double = silu_double_max_ulp;
};

/// softplus(x) = log(1 + e^x), never below max(x, 0) (no overflow for large x).
struct softplus : double_kernel_activation<detail::softplus_double> {
  static constexpr double max_ulp = softplus_float_max_ulp;
  static constexpr double max_ulp_double = softplus_double_max_ulp;
};

/// gelu in the tanh approximation: x/2 · (1 + tanh(sqrt(2/π)(x + 0.044715 x³))),
/// with the constants exact (not the erf form: that is gelu_erf).
struct gelu_tanh : double_kernel_activation<detail::gelu_tanh_double> {
  static constexpr double max_ulp = gelu_tanh_float_max_ulp;
  static constexpr double max_ulp_double = gelu_tanh_double_max_ulp;
};

/// gelu in the erf form: x · Φ(x) = x/2 · (1 + erf(x/√2)), Φ the standard
/// normal distribution function (PyTorch's `gelu(approximate='none')`). −0 at
/// −inf and for x below about −38.6 in double (−13.2 in float).
struct gelu_erf : double_kernel_activation<detail::gelu_erf_double> {
  static constexpr double max_ulp = gelu_erf_float_max_ulp;
  static constexpr double max_ulp_double = gelu_erf_double_max_ulp;
};

/// relu(x) = max(x, 0), exact: −0 gives +0, NaN gives NaN.
struct relu {
  static constexpr int arity = 1;
  static constexpr double max_ulp = 0;

  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE compute_t<T> operator()(T x) const {
    using C = compute_t<T>;
    return detail::rectify<false>(detail::convert<C>(x), C(0));
  }
};

/// leaky_relu{α}(x) = x for x ≥ 0, α·x below (one correctly rounded product);
/// NaN gives NaN. α must be finite (checked when it is made on the host).
template <class A = float>
struct leaky_relu {
  static_assert(std::is_floating_point_v<A>, "fusekit::leaky_relu: alpha must be float or double");
  static constexpr int arity = 1;
  static constexpr double max_ulp = 0.5;
  A alpha;

  explicit leaky_relu(A a) : alpha(a) {
    if (!detail::is_finite(a)) { throw std::invalid_argument("fusekit::leaky_relu: alpha must be finite"); }
  }

  template <class T>
  FUSEKIT_HD FUSEKIT_FORCEINLINE compute_t<T, A> operator()(T x) const {
    using C = compute_t<T, A>;
    return detail::rectify<true>(detail::convert<C>(x), static_cast<C>(alpha));
  }
};
template <class A>
leaky_relu(A) -> leaky_relu<A>;

/// A stage that declares its arity, and its result type R (void: the running
/// value's type, or what f returns when the host can ask it). Made by `unary`
/// and `binary`, for callables the host cannot inspect (`__device__` lambdas).
template <int Arity, class F, class R>
struct stage {
  static_assert(Arity == 1 || Arity == 2, "fusekit::stage: the arity is 1 (unary) or 2 (binary)");
  static constexpr int arity = Arity;
  using result_type = R;
  F f;

  template <class... A>
  FUSEKIT_HD FUSEKIT_FORCEINLINE auto operator()(A... a) const {
    return f(a...);
  }
};

/// `f(running value)` as a fuse stage (see the file comment).
template <class R = void, class F>
FUSEKIT_HD constexpr stage<1, F, R> unary(F f) {
  return {f};
}

/// `f(running value, next input)` as a fuse stage (see the file comment).
template <class R = void, class F>
FUSEKIT_HD constexpr stage<2, F, R> binary(F f) {
  return {f};
}

/// Stages composed left to right; built by `fuse`.
template <class... Stages>
class fused {
  static_assert(sizeof...(Stages) >= 1, "fusekit::fuse needs at least one stage");
  using stage_tuple = ::cuda::std::tuple<Stages...>;

 public:
  constexpr fused() = default;
  FUSEKIT_HD constexpr explicit fused(Stages... stages) : stages_(stages...) {}

  /// Inputs taken when values have type V: 1 + the number of binary stages.
  template <class V = float>
  static constexpr std::size_t arity = 1 + detail::inputs_after<stage_tuple, 0, V>();

  template <class X0, class... Xs, std::enable_if_t<1 + sizeof...(Xs) == arity<X0>, int> = 0>
  FUSEKIT_HD FUSEKIT_FORCEINLINE auto operator()(X0 x0, Xs... xs) const {
    ::cuda::std::tuple<Xs...> const rest(xs...);
    return apply<0, 0>(x0, rest);
  }

  /// The composition the GPU kernel runs: each stage's `prepare()` form where
  /// it has one (normalize does), computed once per thread before the loop.
  FUSEKIT_HD auto prepare() const { return prepare_stages(std::index_sequence_for<Stages...>{}); }

  /// The I-th stage.
  template <std::size_t I>
  FUSEKIT_HD constexpr const auto& stage() const {
    return ::cuda::std::get<I>(stages_);
  }

 private:
  template <std::size_t... I>
  FUSEKIT_HD auto prepare_stages(std::index_sequence<I...>) const {
    using prepared = fused<decltype(detail::prepared_stage(std::declval<const Stages&>()))...>;
    return prepared(detail::prepared_stage(::cuda::std::get<I>(stages_))...);
  }

  template <std::size_t I, std::size_t J, class V, class Rest>
  FUSEKIT_HD FUSEKIT_FORCEINLINE auto apply(V v, const Rest& rest) const {
    if constexpr (I == sizeof...(Stages)) {
      return v;
    } else {
      const auto& s = ::cuda::std::get<I>(stages_);
      using S = std::decay_t<decltype(s)>;
      if constexpr (detail::stage_arity<S, V>() == 1) {
        return apply<I + 1, J>(s(v), rest);
      } else {
        return apply<I + 1, J + 1>(s(v, ::cuda::std::get<J>(rest)), rest);
      }
    }
  }

  stage_tuple stages_{};
};

/// Composes `stages` into one functor (see the file comment for the rules).
template <class... Stages>
FUSEKIT_HD constexpr fused<Stages...> fuse(Stages... stages) {
  return fused<Stages...>(stages...);
}

/// The user's hidden layer: tanh((x / scale) · w).
template <class S = float>
using hidden_layer_op = fused<normalize<S>, weigh, tanh_activate>;

/// `hidden_layer_op` for greyscales in [0, 255].
template <class S = float>
FUSEKIT_HD constexpr hidden_layer_op<S> make_hidden_layer(S scale = S(255)) {
  return fuse(normalize<S>{scale}, weigh{}, tanh_activate{});
}

}  // namespace fusekit
