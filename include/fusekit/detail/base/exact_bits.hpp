// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// A double's value from its bits: exact_bits (mantissa and exponent, so that
/// a subnormal keeps its value where -ffast-math reads it as 0) and
/// ldexp_exact (std::ldexp's result by integer operations), which the
/// trainer's preparation of the data (detail/train/prepare.hpp) scales and
/// weighs with.

#include <fusekit/detail/base/numeric.hpp>

#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {

/// v = mantissa·2^exponent exactly, read from the bits (mantissa an integer
/// below 2^53, 0 for ±0), so that a subnormal v keeps its value where
/// -ffast-math treats subnormal operands as 0; `negative`: the sign bit of a
/// nonzero v (-0 is not negative).
struct exact_binary {
  std::uint64_t mantissa = 0;
  int exponent = 0;
  bool negative = false;
  /// The exponent of the leading bit (ilogb), INT_MIN for 0.
  [[nodiscard]] int leading() const { return mantissa == 0 ? INT_MIN : exponent + 63 - __builtin_clzll(mantissa); }
  /// v·2^shift in double: the mantissa is a normal double, so only a result
  /// below double's normal range can round (to 0 under -ffast-math).
  [[nodiscard]] double scaled(int shift) const {
    return mantissa == 0 ? 0.0 : std::ldexp(static_cast<double>(mantissa), exponent + shift);
  }
};

template <class T>
exact_binary exact_bits(T v) {
  exact_binary b;
  if constexpr (std::is_same_v<T, float>) {
    std::uint32_t const u = bit_cast<std::uint32_t>(v);
    std::uint32_t const field = (u >> 23) & 0xffu, fraction = u & 0x7fffffu;
    b.mantissa = field == 0 ? fraction : (fraction | 0x800000u);
    b.exponent = field == 0 ? -149 : static_cast<int>(field) - 150;
    b.negative = (u >> 31) != 0 && b.mantissa != 0;
  } else {
    std::uint64_t const u = bit_cast<std::uint64_t>(static_cast<double>(v));
    std::uint64_t const field = (u >> 52) & 0x7ffu, fraction = u & 0xfffffffffffffull;
    b.mantissa = field == 0 ? fraction : (fraction | (1ull << 52));
    b.exponent = field == 0 ? -1074 : static_cast<int>(field) - 1075;
    b.negative = (u >> 63) != 0 && b.mantissa != 0;
  }
  return b;
}

/// v·2^e, std::ldexp's bits: from v's bits (a subnormal's fraction shifted up
/// first; integer operations, so also under -ffast-math, where std::ldexp
/// reads a subnormal v as 0) wherever the result is normal, ±inf past
/// double's range, std::ldexp below its normal range. A call per entry of the
/// prepared copy cost more than the fit.
inline double ldexp_exact(double v, int e) {
  std::uint64_t const u = bit_cast<std::uint64_t>(v);
  std::uint64_t const sign = u & (1ull << 63), fraction = u & ((1ull << 52) - 1);
  int const field = static_cast<int>((u >> 52) & 0x7ffu);
  if ((u << 1) == 0 || e == 0 || field == 0x7ff) { return v; }
  // The leading bit's exponent (biased) and the 52 bits below it.
  int lead = field;
  std::uint64_t below = fraction;
  if (field == 0) {  // subnormal: the leading bit is bit p of the fraction
    int const p = 63 - __builtin_clzll(fraction);
    lead = p - 51;  // fraction·2^-1074 = 1.xxx·2^(p − 1074): biased p − 51
    below = (fraction << (52 - p)) & ((1ull << 52) - 1);
  }
  long long const to = static_cast<long long>(lead) + e;
  if (to >= 0x7ff) { return bit_cast<double>(sign | (0x7ffull << 52)); }  // past double's range: ±inf
  if (to > 0) { return bit_cast<double>(sign | (static_cast<std::uint64_t>(to) << 52) | below); }
  return std::ldexp(v, e);
}

}  // namespace detail
}  // namespace fusekit
