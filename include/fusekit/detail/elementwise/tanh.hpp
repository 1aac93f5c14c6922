// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// tanh kernels behind `tanh_activate` and `fast_tanh_activate`.
///
/// `tanh_float` is one branch-free single-precision tanh used on the host and
/// on the device, so the CPU backend is the GPU's twin. Branch-free matters on
/// the host: `#pragma omp simd` vectorizes it without -ffast-math (glibc's
/// vector tanh needs -ffast-math, which also flushes subnormals to zero).
///
///   |x| < 0.65:  tanh(x) = x + x·z·P(z), z = x², P a degree-4 minimax fit
///   |x| ≥ 0.65:  tanh(x) = 1 − 2 / (e^{2|x|} + 1), e^{2a} = 2^k e^{2u} with
///                k = round(2a / ln2), u = a − k ln2/2, and a degree-6 minimax
///                polynomial for e^{2u}; k and 2^k come from one float (below)
///   |x| ≥ 10:    clamped to 10 (tanh rounds to ±1 from |x| ≈ 9.01 on)
///
/// The branch is at 0.65 rather than lower: there 2/(e + 1) ≤ 0.43, so its
/// rounding weighs less in 1 − 2/(e + 1), and a degree-4 P still reaches 7e-9
/// below it. About 29 AVX2 instructions per 8 floats (the form before took 46).
///
/// Checked against a long-double tanh for every non-negative float up to 10
/// (the rest round to 1; the sign only mirrors): at most 1.30 ulp without FMA
/// contraction and 1.33 ulp with it (the AVX2 clone and the device contract;
/// gcc 12 and clang 14 alike), and 1.29 ulp under -ffast-math through the
/// SIMD loop, where the division runs in double (gcc would otherwise
/// approximate it: see the code; the rest of what -ffast-math regroups costs
/// little). A CI test sweeps every float of the intervals near the branch
/// under the fast-math flags (tests/elementwise/tanh_sweep_test.cpp);
/// scripts/tools/tanh_sweep.sh sweeps all of them. ±0 keeps its sign, subnormals
/// are kept, ±inf gives exactly ±1, NaN gives NaN, and no finite input gives
/// NaN. Nothing in it depends on strict IEEE semantics that -ffast-math
/// relaxes: under it k comes from the integers and the division runs in
/// double, and the selects and the NaN test work on the bits (under
/// -ffast-math, which flushes subnormals to zero, a subnormal x gives ±0).

#include <fusekit/config.hpp>
#include <fusekit/detail/base/numeric.hpp>

#include <cmath>
#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace elementwise {

// Whether the host compiler may regroup or approximate float arithmetic here
// (-ffast-math, -funsafe-math-optimizations): tanh_float then takes its
// integer and double-precision paths.
#if !FUSEKIT_DEVICE_PASS && (defined(__FAST_MATH__) || defined(__RECIPROCAL_MATH__) || defined(__ASSOCIATIVE_MATH__))
#define FUSEKIT_TANH_HOST_REGROUPS 1
#else
#define FUSEKIT_TANH_HOST_REGROUPS 0
#endif

// The bounds of tanh_float are public: fusekit::tanh_float_max_ulp and
// fusekit::tanh_float_max_ulp_use_fast_math (functors.hpp).

FUSEKIT_HD FUSEKIT_FORCEINLINE float tanh_float(float x) {
  // Selects are done on the bits, with masks: a floating-point select or a
  // ternary on computed values makes gcc emit a branch and stop vectorizing.
  // The comparisons are signed (AVX2 has no unsigned vector compare).
  std::uint32_t const xbits = bit_cast<std::uint32_t>(x);
  std::uint32_t const abs_bits = xbits & 0x7fffffffu;
  std::int32_t const abs_int = static_cast<std::int32_t>(abs_bits);
  float const a = bit_cast<float>(abs_int < 0x41200000 ? abs_int : 0x41200000);  // min(|x|, 10); NaN → 10

  // e = e^{2a} = 2^k e^{2u}, k = round(2a / ln2) ≤ 29, u = a − k·ln2/2 in [−ln2/4, ln2/4].
  // v = 2a/ln2 + (1.5·2^23 + 127) is an integer-valued float whose last bits
  // are k + 127: shifted up they are the bits of 2^k, and v − (1.5·2^23 + 127)
  // is k, exactly. Under -ffast-math that subtraction would be regrouped into
  // 2a/ln2, so there k comes back through the integers.
  float const v = a * 2.88539004f + 12583039.0f;
  std::uint32_t const v_bits = bit_cast<std::uint32_t>(v);
#if FUSEKIT_TANH_HOST_REGROUPS
  float const k = static_cast<float>(static_cast<std::int32_t>(v_bits - 0x4b40007fu));
#else
  float const k = v - 12583039.0f;
#endif
  // ln2/2 in two parts, the first with 9 trailing zero bits: k·hi is exact.
  float const u = (a - k * 3.4657287598e-01f) - k * 7.1430338265e-07f;
  // e^{2u}: degree-6 minimax polynomial, relative error 3.1e-9 on [−ln2/4, ln2/4].
  float p = 8.845803887e-02f;
  p = p * u + 2.677972913e-01f;
  p = p * u + 6.666920781e-01f;
  p = p * u + 1.333321691e+00f;
  p = p * u + 1.999999762e+00f;
  p = p * u + 2.0f;
  p = p * u + 1.0f;
  float const e = bit_cast<float>(v_bits << 23) * p;
  // tanh|x| = 1 − 2/(e + 1), given x's sign: ±1 ∓ (±1)·2/(e + 1).
  std::uint32_t const sign = xbits & 0x80000000u;
  float const one = bit_cast<float>(0x3f800000u | sign);
#if FUSEKIT_TANH_HOST_REGROUPS
  // Under -ffast-math (-funsafe-math-optimizations with -ffinite-math-only)
  // gcc computes a vector float division as an approximate reciprocal (RCPPS)
  // and one Newton step, documented as such: tanh reached 2.2 ulp. A double
  // division is not approximated (and rounds once more accurately).
  float const large = one - one * static_cast<float>(2.0 / (static_cast<double>(e) + 1.0));
#else
  float const large = one - one * (2.0f / (e + 1.0f));
#endif

  // |x| < 0.65: tanh|x| = f + f·z·P(z), f = |x|, z = f², then x's sign (on
  // |x| so that −0 stays −0, as x + x·z·P(z) would not; a NaN stays NaN). P is
  // a degree-4 minimax fit on [0, 0.65]: relative error 7e-9 in tanh.
  float const f = bit_cast<float>(abs_bits);
  float const z = f * f;
  float q = -5.510328338e-03f;
  q = q * z + 2.046539821e-02f;
  q = q * z - 5.368696898e-02f;
  q = q * z + 1.333082169e-01f;
  q = q * z - 3.333325982e-01f;
  std::uint32_t const small = bit_cast<std::uint32_t>(f + f * (z * q)) | sign;

  // The large branch for 0.65 ≤ |x| ≤ inf, where 2/(e + 1) ≤ 0.43 (its
  // rounding weighs less in 1 − 2/(e + 1)); NaN (abs_bits + 0x7fffff negative
  // as a signed integer) takes the small one.
  std::int32_t const key = static_cast<std::int32_t>(abs_bits + 0x007fffffu);
  std::uint32_t const large_mask = 0u - static_cast<std::uint32_t>(key > 0x3fa66664);  // |x| ≥ 0x3f266666 (0.65f)
  return bit_cast<float>((bit_cast<std::uint32_t>(large) & large_mask) | (small & ~large_mask));
}

FUSEKIT_HD FUSEKIT_FORCEINLINE float accurate_tanh(float x) { return tanh_float(x); }

/// Double: the platform's `tanh` (glibc and CUDA: within 1–2 ulp).
FUSEKIT_HD FUSEKIT_FORCEINLINE double accurate_tanh(double x) {
#if FUSEKIT_DEVICE_PASS
  return ::tanh(x);
#else
  return std::tanh(x);
#endif
}

/// Largest relative error of `fast_tanh(float)` on the device: the hardware
/// `tanh.approx.f32` (PTX ISA, "tanh": maximum relative error 2^-10.987 ≈ 4.94e-4).
/// On the host `fast_tanh` is `accurate_tanh`, well inside this bound.
inline constexpr double fast_tanh_max_relative_error = 4.95e-4;

FUSEKIT_HD FUSEKIT_FORCEINLINE float fast_tanh(float x) {
#if FUSEKIT_DEVICE_PASS && (__CUDA_ARCH__ >= 750)
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return accurate_tanh(x);
#endif
}

/// There is no double hardware approximation; double stays accurate.
FUSEKIT_HD FUSEKIT_FORCEINLINE double fast_tanh(double x) { return accurate_tanh(x); }

}  // namespace elementwise
}  // namespace detail
}  // namespace fusekit
