// SPDX-License-Identifier: Apache-2.0
#pragma once
// The package's calls, one body for both backends: each takes a fusekit
// policy (fusekit::cpu, or fusekit::cuda on the array's stream) and views
// of the caller's arrays, picks the element types at run time from a fixed
// set of compiled instantiations, and calls fusekit's public API. cpu.cpp
// instantiates them for fusekit::cpu, cuda_*.cu for fusekit::cuda. fusekit
// itself checks every argument (sizes, overlap, alignment, options) and its
// fusekit::invalid_argument reaches Python as ValueError.

#include "calls_fwd.hpp"

#include <fusekit/fusekit.hpp>

#include <cuda/std/span>

#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>

namespace fusekit_python {

template <class T>
::cuda::std::span<const T> in_span(const view& v) {
  return {v.as<const T>(), static_cast<std::size_t>(v.size)};
}
template <class T>
::cuda::std::span<T> out_span(const view& v) {
  return {v.as<T>(), static_cast<std::size_t>(v.size)};
}

// ---------------------------------------------------------------- elementwise

/// The stages `transform` composes, as bits of a composition's code: at most
/// one of each, in this order (normalize, weigh, then one activation).
enum stage_bits : int { normalize_bit = 1, weigh_bit = 2, tanh_bit = 4, fast_tanh_bit = 8 };

/// The compiled compositions: every non-empty chain of normalize?, weigh?,
/// (tanh | fast_tanh)?, eleven in all.
constexpr bool is_composition(int code) {
  return code >= 1 && code <= 15 && (code & (tanh_bit | fast_tanh_bit)) != (tanh_bit | fast_tanh_bit);
}

template <int Code, class S>
auto make_composition(S scale) {
  auto n = [&] {
    if constexpr ((Code & normalize_bit) != 0) {
      return std::tuple<fusekit::normalize<S>>{fusekit::normalize<S>{scale}};
    } else {
      return std::tuple<>{};
    }
  }();
  auto w = [] {
    if constexpr ((Code & weigh_bit) != 0) {
      return std::tuple<fusekit::weigh>{};
    } else {
      return std::tuple<>{};
    }
  }();
  auto a = [] {
    if constexpr ((Code & tanh_bit) != 0) {
      return std::tuple<fusekit::tanh_activate>{};
    } else if constexpr ((Code & fast_tanh_bit) != 0) {
      return std::tuple<fusekit::fast_tanh_activate>{};
    } else {
      return std::tuple<>{};
    }
  }();
  return std::apply([](auto... s) { return fusekit::fuse(s...); }, std::tuple_cat(n, w, a));
}

/// out = tanh((grey / scale) · w), fused (one pass) or as three passes.
/// grey: any element type (uint8 for the three passes, a comparison the
/// module compiles for the benchmarks' case alone); w and out: one
/// floating-point type.
template <class Policy>
void hidden_layer(const Policy& policy, const view& grey, const view& w, const view& out, double scale, bool fused) {
  expect_type(out, w.type, "out has the type of w");
  if (!fused) { expect_type(grey, dtype::u8, "the three-pass layer, a comparison, takes uint8 grey"); }
  with_float(w.type, "w", [&](auto wt) {
    using W = typename decltype(wt)::type;
    if (!fused) {
      fusekit::hidden_layer_unfused(policy, in_span<std::uint8_t>(grey), in_span<W>(w), out_span<W>(out),
                                    static_cast<float>(scale));
      return;
    }
    with_element(grey.type, "grey", [&](auto gt) {
      using G = typename decltype(gt)::type;
      fusekit::hidden_layer(policy, in_span<G>(grey), in_span<W>(w), out_span<W>(out), static_cast<float>(scale));
    });
  });
}

template <int Code, class Policy, class O>
void transform_as(const Policy& policy, const view& x, const view* w, const view& out, double scale) {
  using S = std::conditional_t<std::is_same_v<O, double>, double, float>;
  auto const op = make_composition<Code>(static_cast<S>(scale));
  auto run = [&](auto xt) {
    using X = typename decltype(xt)::type;
    if constexpr ((Code & weigh_bit) != 0) {
      fusekit::transform(policy, out_span<O>(out), op, in_span<X>(x), in_span<O>(*w));
    } else {
      fusekit::transform(policy, out_span<O>(out), op, in_span<X>(x));
    }
  };
  if (x.type == dtype::u8) {
    run(type_tag<std::uint8_t>{});
  } else {
    expect_type(x, out.type, "the first input is uint8 or has out's type");
    run(type_tag<O>{});
  }
}

template <class Policy, class O, int Code = 1>
void transform_code(const Policy& policy, int code, const view& x, const view* w, const view& out, double scale) {
  if constexpr (Code <= 15) {
    if constexpr (is_composition(Code)) {
      if (code == Code) {
        transform_as<Code, Policy, O>(policy, x, w, out, scale);
        return;
      }
    }
    transform_code<Policy, O, Code + 1>(policy, code, x, w, out, scale);
  } else {
    throw std::invalid_argument("fusekit.transform: composition code " + std::to_string(code) +
                                " is not one of the compiled compositions");
  }
}

/// out = composition(x[, w]): `code` is a sum of stage_bits.
template <class Policy>
void transform(const Policy& policy, int code, const view& x, const view* w, const view& out, double scale) {
  if (!is_composition(code)) {
    throw std::invalid_argument("fusekit.transform: composition code " + std::to_string(code) +
                                " is not one of the compiled compositions");
  }
  if (((code & weigh_bit) != 0) != (w != nullptr)) {
    throw std::invalid_argument(std::string("fusekit.transform: the composition takes ") +
                                ((code & weigh_bit) != 0 ? "two inputs (it weighs)" : "one input") + ", given " +
                                (w != nullptr ? "two" : "one"));
  }
  if (w != nullptr) { expect_type(*w, out.type, "weigh's input has out's type"); }
  with_float(out.type, "out", [&](auto ot) {
    using O = typename decltype(ot)::type;
    transform_code<Policy, O>(policy, code, x, w, out, scale);
  });
}

// ------------------------------------------------------------------ reduction

template <class Acc>
Acc scalar_as(const scalar& s) {
  if constexpr (std::is_floating_point_v<Acc>) {
    return static_cast<Acc>(s.real);
  } else if constexpr (std::is_signed_v<Acc>) {
    return static_cast<Acc>(s.signed_int);
  } else {
    return static_cast<Acc>(s.unsigned_int);
  }
}

/// Calls f(type_tag<T>{}, type_tag<Acc>{}) for the input's type and the
/// accumulator `acc` (out's type), which fusekit's rules allow: the default
/// accumulator of T, or double for float32, float16 and bfloat16.
template <class F>
void with_accumulator(const view& in, const view& acc, F&& f) {
  with_element(in.type, in.name, [&](auto it) {
    using T = typename decltype(it)::type;
    using Default = fusekit::accumulator_t<T>;
    if constexpr (std::is_floating_point_v<Default> && !std::is_same_v<T, double>) {
      if (acc.type == dtype::f64) {
        f(it, type_tag<double>{});
        return;
      }
    }
    if constexpr (std::is_same_v<Default, float>) {
      if (acc.type == dtype::f32) {
        f(it, type_tag<float>{});
        return;
      }
    } else if constexpr (std::is_same_v<Default, double>) {
      if (acc.type == dtype::f64) {
        f(it, type_tag<double>{});
        return;
      }
    } else if constexpr (std::is_same_v<Default, std::int64_t>) {
      if (acc.type == dtype::i64) {
        f(it, type_tag<std::int64_t>{});
        return;
      }
    } else {
      if (acc.type == dtype::u64) {
        f(it, type_tag<std::uint64_t>{});
        return;
      }
    }
    std::string allowed;
    if constexpr (std::is_same_v<T, double>) {
      allowed = "float64 (double input sums in double)";
    } else if constexpr (std::is_floating_point_v<Default>) {
      allowed = "float32 or float64 (float, float16 and bfloat16 inputs sum in float or double)";
    } else if constexpr (std::is_signed_v<Default>) {
      allowed = "int64 (signed integers sum in a 64-bit integer)";
    } else {
      allowed = "uint64 (unsigned integers sum in a 64-bit integer)";
    }
    throw type_error(std::string("the accumulator (dtype) is ") + dtype_name(acc.type) + " but for " + in.name +
                     " of " + dtype_name(in.type) + " it must be " + allowed);
  });
}

/// *out = the reduction of `in` with `op`, from `init` when given (else
/// reduce_sum for op = sum), by `algorithm`; out has the accumulator's type.
template <class Policy>
void reduce(const Policy& policy, const view& in, const view& out, reduce_op op, const scalar* init,
            fusekit::reduce_algorithm algorithm) {
  with_accumulator(in, out, [&](auto it, auto at) {
    using T = typename decltype(it)::type;
    using Acc = typename decltype(at)::type;
    Acc* const o = out.as<Acc>();
    switch (op) {
      case reduce_op::sum:
        if (init == nullptr) {
          fusekit::reduce_sum(policy, in_span<T>(in), o, algorithm);
        } else {
          fusekit::reduce(policy, in_span<T>(in), o, fusekit::plus{}, scalar_as<Acc>(*init), algorithm);
        }
        return;
      case reduce_op::min:
        fusekit::reduce(policy, in_span<T>(in), o, fusekit::minimum{}, scalar_as<Acc>(*init), algorithm);
        return;
      case reduce_op::max:
        fusekit::reduce(policy, in_span<T>(in), o, fusekit::maximum{}, scalar_as<Acc>(*init), algorithm);
        return;
    }
  });
}

// -------------------------------------------------------------------- trainer

/// fit(X, Y) into W (N × L), with the options; sample_weight and intercept
/// may be null.
template <class Policy>
fusekit::fit_report fit(const Policy& policy, const view& X, const view& Y, const view& W,
                        const fusekit::gd_options& options, const view* sample_weight, const view* intercept) {
  return with_real(X.type, "X", [&](auto xt) {
    using T = typename decltype(xt)::type;
    expect_type(Y, X.type, "Y has X's type");
    expect_type(W, X.type, "W has X's type");
    fusekit::fit_extras<T> extras;
    if (sample_weight != nullptr) {
      expect_type(*sample_weight, X.type, "sample_weight has X's type");
      extras.sample_weight = in_span<T>(*sample_weight);
    }
    if (intercept != nullptr) {
      expect_type(*intercept, X.type, "intercept has X's type");
      extras.intercept = out_span<T>(*intercept);
    }
    return fusekit::fit(policy, fusekit::matrix<const T>(X.as<const T>(), X.rows, X.cols),
                        fusekit::matrix<const T>(Y.as<const T>(), Y.rows, Y.cols),
                        fusekit::matrix<T>(W.as<T>(), W.rows, W.cols), options, extras);
  });
}

/// Y_hat = X Wᵀ (+ intercept).
template <class Policy>
void predict(const Policy& policy, const view& X, const view& W, const view* intercept, const view& Y_hat) {
  with_real(X.type, "X", [&](auto xt) {
    using T = typename decltype(xt)::type;
    expect_type(W, X.type, "W has X's type");
    expect_type(Y_hat, X.type, "out has X's type");
    fusekit::matrix<const T> const x(X.as<const T>(), X.rows, X.cols);
    fusekit::matrix<const T> const w(W.as<const T>(), W.rows, W.cols);
    fusekit::matrix<T> const y(Y_hat.as<T>(), Y_hat.rows, Y_hat.cols);
    if (intercept != nullptr) {
      expect_type(*intercept, X.type, "intercept has X's type");
      fusekit::predict(policy, x, w, in_span<T>(*intercept), y);
      return;
    }
    fusekit::predict(policy, x, w, y);
  });
}

}  // namespace fusekit_python

// Explicit instantiations of the calls of one part for one policy: each
// backend's translation units (cpu_*.cpp, cuda_*.cu) hold one part each, so
// that they build in parallel.
#define FUSEKIT_PYTHON_LAYER(Policy) \
  template void hidden_layer<Policy>(const Policy&, const view&, const view&, const view&, double, bool)
#define FUSEKIT_PYTHON_TRANSFORM(Policy) \
  template void transform<Policy>(const Policy&, int, const view&, const view*, const view&, double)
#define FUSEKIT_PYTHON_REDUCE(Policy)                                                             \
  template void reduce<Policy>(const Policy&, const view&, const view&, reduce_op, const scalar*, \
                               fusekit::reduce_algorithm)
#define FUSEKIT_PYTHON_TRAIN(Policy)                                                              \
  template fusekit::fit_report fit<Policy>(const Policy&, const view&, const view&, const view&,  \
                                           const fusekit::gd_options&, const view*, const view*); \
  template void predict<Policy>(const Policy&, const view&, const view&, const view*, const view&)
