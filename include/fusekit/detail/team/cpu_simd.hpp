// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CPU's SIMD: `FUSEKIT_SIMD_LOOP`, the pragma every CPU loop over
/// elements carries (OpenMP's `omp simd`, empty without -fopenmp), and the
/// explicit SIMD vectors of the CPU team's column pass
/// (detail/team/cpu_columns.hpp): GCC/Clang vector types, the optimizer
/// barrier on a vector (an empty asm: no reassociation, no FMA contraction,
/// and the loop stays vector code), the lane-wise combine of plus, minimum and
/// maximum.

#include <fusekit/config.hpp>
#include <fusekit/reduce_types.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#if FUSEKIT_HAS_OPENMP && !FUSEKIT_DEVICE_PASS
#define FUSEKIT_SIMD_LOOP _Pragma("omp simd")
#else
#define FUSEKIT_SIMD_LOOP
#endif

#if !FUSEKIT_DEVICE_PASS && (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__aarch64__))
#define FUSEKIT_SIMD_VECTORS 1
#else
#define FUSEKIT_SIMD_VECTORS 0
#endif

namespace fusekit {
namespace detail {
inline namespace team {

/// Whether the column pass of op over Acc runs in host vectors.
template <class Op, class Acc>
inline constexpr bool vector_columns = FUSEKIT_SIMD_VECTORS&& std::is_arithmetic_v<Acc> &&
                                       (sizeof(Acc) == 4 || sizeof(Acc) == 8) &&
                                       (std::is_same_v<Op, plus> || std::is_same_v<Op, minimum> ||
                                        std::is_same_v<Op, maximum>);

#if FUSEKIT_SIMD_VECTORS

/// Bytes lanes of T: a GCC/Clang vector.
template <class T, int Bytes>
struct simd_vector {
  typedef T type __attribute__((vector_size(Bytes)));
  /// The same, at T's alignment: for loads and stores through T arrays (typed,
  /// so that a store to the lanes is known not to touch the source's pointers).
  typedef T unaligned __attribute__((vector_size(Bytes), aligned(alignof(T))));
};

// Vectors pass by reference only: a 32-byte vector by value in a function not
// compiled for AVX changes the ABI (and gcc says so, -Wpsabi).

/// v = Bytes / 8 values from p, converted to double (a vector of doubles).
template <int Bytes, class T>
FUSEKIT_FORCEINLINE void load_doubles(const T* p, typename simd_vector<double, Bytes>::type& v) {
  if constexpr (std::is_same_v<T, double>) {
    v = *reinterpret_cast<const typename simd_vector<double, Bytes>::unaligned*>(p);
  } else {
    for (int i = 0; i < Bytes / 8; ++i) { v[i] = static_cast<double>(p[i]); }
  }
}

/// p[0 .. Bytes / 8) = v.
template <int Bytes>
FUSEKIT_FORCEINLINE void store_doubles(double* p, const typename simd_vector<double, Bytes>::type& v) {
  *reinterpret_cast<typename simd_vector<double, Bytes>::unaligned*>(p) = v;
}

/// `v` through an empty asm, in a vector register: the optimizer cannot see
/// through it, so an operation on it is the one written, alone. Clang checks
/// an asm operand's size against the ISA of the function that holds the asm
/// (a 32-byte operand needs AVX there, whatever the caller's target), so under
/// Clang the barrier is empty and vector_combine's addition is kept as written
/// by `#pragma clang fp` instead.
template <class V>
FUSEKIT_FORCEINLINE void vector_barrier([[maybe_unused]] V& v) {
#if defined(__clang__)
#elif defined(__x86_64__)
  __asm__("" : "+x"(v));
#else
  __asm__("" : "+w"(v));
#endif
}

/// acc = op(acc, b) lane by lane: plus as one rounded addition per lane
/// (floating: both operands behind the barrier; integers: unsigned, wrapping),
/// minimum and maximum as the ops define them: on integers y < x ? y : x and
/// x < y ? y : x; on floating lanes IEEE's minimum and maximum, on the bits in
/// integer lanes (ordered_bits, the NaN test), as the scalar op computes them.
template <class Op, class E, class V>
FUSEKIT_FORCEINLINE void vector_combine(V& acc, V& b) {
  if constexpr (std::is_same_v<Op, plus>) {
    if constexpr (std::is_floating_point_v<E>) {
      vector_barrier(acc);
      vector_barrier(b);
    }
    {
#if defined(__clang__)
#pragma clang fp reassociate(off) contract(off)
#endif
      acc = acc + b;
    }
  } else if constexpr (std::is_floating_point_v<E>) {
    using F = float_bits<E>;
    typedef typename F::type lanes __attribute__((vector_size(sizeof(V))));
    lanes const x = (lanes)acc, y = (lanes)b;  // the same bits, as integer lanes
    lanes kx = x, ky = y, nan_x, nan_y;
    F::order(kx);
    F::order(ky);
    F::nan_mask(x, nan_x);
    F::nan_mask(y, nan_y);
    lanes take_y;  // −1 where y wins
    if constexpr (std::is_same_v<Op, minimum>) {
      take_y = ky < kx;
    } else {
      take_y = kx < ky;
    }
    lanes const either_nan = nan_x | nan_y;
    lanes const r = (take_y & y) | (~take_y & x);
    lanes const out = (either_nan & F::quiet_nan) | (~either_nan & r);
    acc = (V)out;
  } else if constexpr (std::is_same_v<Op, minimum>) {
    acc = b < acc ? b : acc;
  } else {
    acc = acc < b ? b : acc;
  }
}

/// op(a, b) for one lane, with the barrier as in vector_combine (the lanes a
/// vector does not cover).
template <class Op, class Acc>
FUSEKIT_FORCEINLINE Acc scalar_combine(Acc a, Acc b) {
  if constexpr (std::is_same_v<Op, plus> && std::is_floating_point_v<Acc>) {
#if defined(__x86_64__)
    __asm__("" : "+x"(a), "+x"(b));
#else
    __asm__("" : "+w"(a), "+w"(b));
#endif
    return a + b;
  } else {
    return Op{}(a, b);
  }
}

/// f(0), f(1), ..., f(N − 1), written out (a loop the compiler need not unroll).
template <int... I, class F>
FUSEKIT_FORCEINLINE void unrolled(std::integer_sequence<int, I...>, const F& f) {
  (f(I), ...);
}

/// The type lanes of Acc combine in: integers add as their unsigned twins
/// (wrap-around, defined); min and max compare as Acc.
template <class Op, class Acc>
using lane_element_t = typename std::conditional_t<std::is_integral_v<Acc> && std::is_same_v<Op, plus>,
                                                   std::make_unsigned<Acc>, std::common_type<Acc>>::type;

/// W consecutive lanes from/to memory as one vector (typed unaligned access).
template <int Bytes, class E>
FUSEKIT_FORCEINLINE void get_lanes(typename simd_vector<E, Bytes>::type& v, const E* p) {
  v = *reinterpret_cast<const typename simd_vector<E, Bytes>::unaligned*>(p);
}
template <int Bytes, class E>
FUSEKIT_FORCEINLINE void put_lanes(E* p, const typename simd_vector<E, Bytes>::type& v) {
  *reinterpret_cast<typename simd_vector<E, Bytes>::unaligned*>(p) = v;
}

#endif  // FUSEKIT_SIMD_VECTORS

}  // namespace team
}  // namespace detail
}  // namespace fusekit
