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
///   |x| < 0.55:  tanh(x) = x + x·z·P(z), z = x², P a degree-5 least-squares fit
///   |x| ≥ 0.55:  tanh(x) = 1 − 2 / (e^{2|x|} + 1), e^y by range reduction
///                y = k ln2 + r and a degree-7 Taylor polynomial
///   |x| ≥ 10:    clamped to 10 (tanh rounds to ±1 from |x| ≈ 9.01 on)
///
/// Checked against a long-double tanh for every non-negative float up to 10
/// (the rest round to 1; the sign only mirrors): at most 1.53 ulp without FMA
/// contraction and 1.59 ulp with it (the device contracts by default), and
/// 1.23 ulp under -ffast-math through the SIMD loop, where the division runs
/// in double (gcc would otherwise approximate it: see the code; the rest of
/// what -ffast-math regroups costs little). A CI test sweeps every float of
/// the intervals near the branch under the fast-math flags
/// (tests/elementwise/tanh_sweep_test.cpp); scripts/tanh_sweep.sh sweeps all of
/// them. ±0 keeps
/// its sign, subnormals are kept, ±inf gives exactly ±1, NaN gives NaN, and no
/// finite input gives NaN. Nothing in it depends on strict IEEE semantics that
/// -ffast-math relaxes: the rounding of k is a conversion to int, the selects
/// and the NaN test work on the bits (under -ffast-math, which flushes
/// subnormals to zero, a subnormal x gives ±0).

#include <fusekit/config.hpp>
#include <fusekit/detail/core/numeric.hpp>

#include <cmath>
#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace elementwise {

// The bounds of tanh_float are public: fusekit::tanh_float_max_ulp and
// fusekit::tanh_float_max_ulp_use_fast_math (functors.hpp).

FUSEKIT_HD FUSEKIT_FORCEINLINE float tanh_float(float x) {
  // Selects are done on the bits, with masks: a floating-point select or a
  // ternary on computed values makes gcc emit a branch and stop vectorizing.
  std::uint32_t const xbits = bit_cast<std::uint32_t>(x);
  std::uint32_t const abs_bits = xbits & 0x7fffffffu;
  std::uint32_t const clamped = abs_bits < 0x41200000u ? abs_bits : 0x41200000u;  // min(|x|, 10)
  float const a = bit_cast<float>(clamped);

  // e = e^{2a} = 2^k e^r; k ≤ 29, so k·ln2_hi is exact (ln2_hi has 9 trailing zero bits).
  // k = round(y / ln2) by a conversion to int (y ≥ 0: truncating y/ln2 + 1/2 rounds
  // half up), which no fast-math flag folds; the classic `+ 1.5·2^23 − 1.5·2^23`
  // rounding trick is folded away by reassociation under -ffast-math.
  float const y = a + a;
  std::int32_t const ki = static_cast<std::int32_t>(y * 1.44269502f + 0.5f);
  std::uint32_t const k_bits = static_cast<std::uint32_t>(ki);
  float const k = static_cast<float>(ki);
  // (-ffast-math may regroup this into y − k·ln2, and the small branch into
  // a·(1 + z·q); with the division in double the sweeps measure 1.23 ulp at
  // most under it, inside the bound.)
  float const r = (y - k * 6.9314575195e-01f) - k * 1.4286067653e-06f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  float const e = bit_cast<float>((k_bits + 127u) << 23) * p;
#if !FUSEKIT_DEVICE_PASS && (defined(__FAST_MATH__) || defined(__RECIPROCAL_MATH__) || defined(__ASSOCIATIVE_MATH__))
  // Under -ffast-math (-funsafe-math-optimizations with -ffinite-math-only)
  // gcc computes a vector float division as an approximate reciprocal (RCPPS)
  // and one Newton step, documented as such: tanh reached 2.2 ulp. A double
  // division is not approximated (and rounds once more accurately).
  float const large = 1.0f - static_cast<float>(2.0 / (static_cast<double>(e) + 1.0));
#else
  float const large = 1.0f - 2.0f / (e + 1.0f);
#endif

  float const z = a * a;
  float q = 2.401629272e-03f;
  q = q * z - 8.419356246e-03f;
  q = q * z + 2.178471312e-02f;
  q = q * z - 5.395995452e-02f;
  q = q * z + 1.333329589e-01f;
  q = q * z - 3.333333278e-01f;
  float const small = a + a * (z * q);

  std::uint32_t const small_mask = 0u - static_cast<std::uint32_t>(abs_bits < 0x3f0ccccdu);  // |x| < 0.55f
  std::uint32_t const t =
      (bit_cast<std::uint32_t>(small) & small_mask) | (bit_cast<std::uint32_t>(large) & ~small_mask);
  std::uint32_t const signed_t = t | (xbits & 0x80000000u);
  std::uint32_t const nan_mask = 0u - static_cast<std::uint32_t>(abs_bits > 0x7f800000u);
  return bit_cast<float>((xbits & nan_mask) | (signed_t & ~nan_mask));
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
