// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Rounding as written: additions and products that no compiler fuses into a
/// multiply-add, and the multiply-add itself (`fma_rn`).
///
/// nvcc fuses `a * b + c` into one `fma` by default (`--fmad=true`), also
/// across inlined calls, so a product computed by a user's op and the add that
/// sums it into the deterministic tree become one rounding on the device and
/// two on the host. `add_rn` and `mul_rn` are single IEEE round-to-nearest
/// operations everywhere:
///
/// * device: `__fadd_rn`/`__dadd_rn` and `__fmul_rn`/`__dmul_rn`, which the CUDA
///   math API documents as never merged into a multiply-add (PTX `add.rn`,
///   `mul.rn`: an explicit rounding mode keeps ptxas from contracting them);
/// * host: plain `+` and `*`. Where the host target has FMA instructions
///   (`__FMA__` on x86-64, always on AArch64), gcc contracts across statements
///   under its default `-ffp-contract=fast`; there the operands pass through an
///   empty asm that the optimizer cannot see through, which also keeps the loop
///   from vectorizing (the price of the same bits on such a build). The same
///   holds under `-ffast-math` (`-fassociative-math`), where gcc would regroup
///   a chain of additions.
///
/// Integers add as unsigned: two's-complement wrap-around, defined behaviour.

#include <fusekit/config.hpp>

#include <cmath>
#include <type_traits>

#if !FUSEKIT_DEVICE_PASS && (defined(__GNUC__) || defined(__clang__)) &&                              \
    (defined(__FMA__) || defined(__aarch64__) || defined(__FP_FAST_FMA) || defined(__FP_FAST_FMAF) || \
     defined(__FAST_MATH__) || defined(__ASSOCIATIVE_MATH__))
#define FUSEKIT_HOST_MAY_CONTRACT 1
#else
#define FUSEKIT_HOST_MAY_CONTRACT 0
#endif

namespace fusekit {
namespace detail {
inline namespace base {

/// `v`, through a barrier the optimizer cannot look through (host builds that may contract only).
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T opaque(T v) {
#if FUSEKIT_HOST_MAY_CONTRACT
#if defined(__x86_64__) || defined(__i386__)
  __asm__("" : "+x"(v));
#elif defined(__aarch64__)
  __asm__("" : "+w"(v));
#else
  __asm__("" : "+m"(v));
#endif
#endif
  return v;
}

/// a·b + c, rounded once, on the host (`std::fma`: the FMA instruction where
/// the target has it, else software) and the device (`__fmaf_rn`, `__fma_rn`),
/// also under `--use_fast_math`.
FUSEKIT_HD FUSEKIT_FORCEINLINE float fma_rn(float a, float b, float c) {
#if FUSEKIT_DEVICE_PASS
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
FUSEKIT_HD FUSEKIT_FORCEINLINE double fma_rn(double a, double b, double c) {
#if FUSEKIT_DEVICE_PASS
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// Integers wrap around in two's complement: the arithmetic runs in an unsigned
/// type at least as wide as `unsigned` (narrower types would promote to int).
template <class T>
using wrap_t = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

enum class rounded_op { add, mul };

/// a + b or a · b, one rounding, never fused with another operation (integers: wrap-around).
template <rounded_op Op, class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T rounded(T a, T b) {
  constexpr bool add = Op == rounded_op::add;
  if constexpr (std::is_integral_v<T>) {
    using W = wrap_t<T>;
    return static_cast<T>(add ? static_cast<W>(a) + static_cast<W>(b) : static_cast<W>(a) * static_cast<W>(b));
  } else {
#if FUSEKIT_DEVICE_PASS
    if constexpr (std::is_same_v<T, float>) {
      if constexpr (add) {
        return __fadd_rn(a, b);
      } else {
        return __fmul_rn(a, b);
      }
    } else if constexpr (std::is_same_v<T, double>) {
      if constexpr (add) {
        return __dadd_rn(a, b);
      } else {
        return __dmul_rn(a, b);
      }
    } else {
      if constexpr (add) {
        return a + b;
      } else {
        return a * b;
      }
    }
#else
    if constexpr (add) {
      return opaque(a) + opaque(b);
    } else {
      return opaque(a * b);
    }
#endif
  }
}

/// a + b, one rounding, never fused with a product (integers: wrap-around).
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T add_rn(T a, T b) {
  return rounded<rounded_op::add>(a, b);
}

/// a · b, one rounding, never fused with an addition (integers: wrap-around).
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T mul_rn(T a, T b) {
  return rounded<rounded_op::mul>(a, b);
}

}  // namespace base
}  // namespace detail
}  // namespace fusekit
