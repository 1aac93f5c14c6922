// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The deterministic tree's tiles over an array of integers summed into a
/// 64-bit integer (detail/reduce/cpu.hpp's cpu_tree_tiles): each tile is one
/// exact sum in address order, read in host SIMD vectors as a plain read loop
/// reads the array. Integer addition modulo 2^64 is associative and
/// commutative, so the sum has the bits of the tree's order, which the CPU
/// tree reaches through the column pass for every other type
/// (detail/team/cpu_columns.hpp) and the GPU through its block.
///
/// Host code of GCC and Clang on x86-64 and AArch64 only (FUSEKIT_SIMD_VECTORS).

#include <fusekit/detail/core/cpu_parallel.hpp>
#include <fusekit/detail/reduce/source.hpp>
#include <fusekit/detail/reduce/tree.hpp>
#include <fusekit/detail/team/cpu_simd.hpp>
#include <fusekit/reduce_types.hpp>
#include <fusekit/tuning.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace reduce {

/// Whether src's tiles are summed as exact integer sums (cpu_exact_sum): never
/// where there are no host vectors.
template <class Op, class Acc, class Src>
inline constexpr bool exact_tile_sum = false;

/// out[t − first] = the tree's value of tile t over src's n values, for t in
/// [first, last), on this thread: in 32-byte vectors where the CPU has AVX2.
/// (Called where exact_tile_sum holds only.)
template <class Acc, class Src>
void cpu_exact_tiles(const Src& src, std::int64_t n, std::int64_t first, std::int64_t last, Acc* out);

#if FUSEKIT_SIMD_VECTORS

/// Σ of the tile's values 0 ≤ i < count (count ≤ the tree's tile), exact
/// modulo 2^64, as Acc: the tile's value in the tree's order, for an array of
/// integers (exact_tile_sum). `access` (detail/reduce/source.hpp) reads the
/// array, and prefetches values narrower than 64 bits as the column pass does
/// (64-bit ones read faster without: docs/performance.md).
///
/// The array is read in `Bytes`-byte vectors, in address order, as a plain
/// read loop reads it. 64-bit values add lane by lane. Narrower ones are split
/// in lanes L of 16 bits (8-bit T: two values per lane) or 32 bits (16-bit T:
/// two per lane; 32-bit T: one, cut at bit 16) into a low and a high half,
/// each summed in its own lanes, which cannot overflow (the halves are at most
/// `low` and lanes are flushed every `chunk` vectors); signed values are first
/// biased to unsigned ones (the sign bit flipped: x + 2^(bits − 1)), the bias
/// taken off the total. Four vector instructions per vector, 32 values of
/// 8 bits, 16 of 16 bits, 8 of 32 bits: far below the memory's time.
template <int Bytes, class Acc, class Access>
FUSEKIT_FORCEINLINE Acc cpu_exact_sum(std::int64_t count, const Access& access) {
  using T = typename Access::value_type;
  const T* const p = access.values(0);
  constexpr int bits = 8 * static_cast<int>(sizeof(T));
  constexpr std::int64_t line = 64;  // bytes per prefetch: one cache line
  constexpr std::int64_t per_line = line / Bytes;
  constexpr std::int64_t ahead = cpu_stream_tuning::prefetch_ahead_bytes / static_cast<std::int64_t>(sizeof(T));
  constexpr std::int64_t far = cpu_stream_tuning::prefetch_far_bytes / static_cast<std::int64_t>(sizeof(T));
  using L = std::conditional_t<bits == 64, std::uint64_t, std::conditional_t<bits == 8, std::uint16_t, std::uint32_t>>;
  using V = typename simd_vector<L, Bytes>::type;
  constexpr std::int64_t per_vector = Bytes / static_cast<std::int64_t>(sizeof(T));
  constexpr std::int64_t values_per_line = line / static_cast<std::int64_t>(sizeof(T));
  auto const lane_total = [](const V& v) __attribute__((always_inline)) {
    std::uint64_t t = 0;
    for (std::size_t k = 0; k < Bytes / sizeof(L); ++k) { t += v[k]; }  // in registers, not through memory
    return t;
  };
  std::int64_t const body = count / values_per_line * values_per_line;
  std::uint64_t total = 0;
  if constexpr (bits == 64) {
    V acc{};
    for (std::int64_t i = 0; i < body; i += values_per_line) {
      unrolled(
          std::make_integer_sequence<int, per_line>{}, [&](int k) __attribute__((always_inline)) {
            V v;
            std::memcpy(&v, p + i + k * per_vector, sizeof v);
            acc += v;
          });
    }
    total = lane_total(acc);
  } else {
    constexpr int half = bits == 8 ? 8 : 16;  // where a lane is cut
    constexpr L low = static_cast<L>((L{1} << half) - 1);
    // The sign bit of every value in a lane.
    constexpr L bias = !std::is_signed_v<T> ? L{0}
                       : bits == 8          ? static_cast<L>(0x8080u)
                       : bits == 16         ? static_cast<L>(0x80008000u)
                                            : static_cast<L>(0x80000000u);
    constexpr std::int64_t chunk =  // whole lines of vectors whose halves sum below L's limit
        static_cast<std::int64_t>(static_cast<L>(~L{0}) / low) / per_line * per_line;
    for (std::int64_t c0 = 0; c0 < body; c0 += chunk * per_vector) {
      std::int64_t const c1 = c0 + chunk * per_vector < body ? c0 + chunk * per_vector : body;
      V lo{}, hi{};
      for (std::int64_t i = c0; i < c1; i += values_per_line) {
        access.prefetch_far(i + far, static_cast<int>(values_per_line));
        access.prefetch(i + ahead, static_cast<int>(values_per_line));
        unrolled(
            std::make_integer_sequence<int, per_line>{}, [&](int k) __attribute__((always_inline)) {
              V w;
              std::memcpy(&w, p + i + k * per_vector, sizeof w);
              w ^= bias;
              lo += w & low;
              hi += w >> half;
            });
      }
      std::uint64_t const l = lane_total(lo), h = lane_total(hi);
      total += bits == 32 ? (h << 16) + l : h + l;  // 32-bit T: hi is the value's top 16 bits
    }
    if constexpr (std::is_signed_v<T>) { total -= static_cast<std::uint64_t>(body) << (bits - 1); }
  }
  for (std::int64_t i = body; i < count; ++i) { total += static_cast<std::uint64_t>(static_cast<Acc>(p[i])); }
  return static_cast<Acc>(total);
}

#if defined(__x86_64__)
/// cpu_exact_sum in 32-byte vectors, compiled for AVX2 (as cpu_column_reduce_avx2 is,
/// detail/team/cpu_columns.hpp), its code inspected by
/// tests/codegen/check_host_tree.cmake.
template <class Acc, class Access>
__attribute__((target("avx2,fma"), noinline, flatten)) inline Acc cpu_exact_sum_avx2(std::int64_t count,
                                                                                     const Access& access) {
  return cpu_exact_sum<32, Acc>(count, access);
}

#endif

/// A sum of an array of integers T into a 64-bit integer Acc: integer
/// addition modulo 2^64 is associative and commutative, so every order of a
/// tile's additions, the tree's included, gives the same bits.
template <class Op, class Acc, class T>
inline constexpr bool exact_tile_sum<Op, Acc, array_source<Acc, T>> =
    std::is_same_v<Op, plus>&& std::is_integral_v<Acc> && sizeof(Acc) == 8 && std::is_integral_v<T> &&
    !std::is_same_v<T, bool> && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8);

template <class Acc, class Src>
void cpu_exact_tiles(const Src& src, std::int64_t n, std::int64_t first, std::int64_t last, Acc* out) {
  (void)isa_dispatch_vectors([&](auto width) FUSEKIT_LAMBDA_INLINE {
    for (std::int64_t t = first; t < last; ++t) {
      std::int64_t const base = t * tree_tile;
      std::int64_t const count = n - base < tree_tile ? n - base : tree_tile;
      tile_access<Src> const access{src, base, n};
#if defined(__x86_64__)
      if constexpr (decltype(width)::value == 32) {
        out[t - first] = cpu_exact_sum_avx2<Acc>(count, access);
        continue;
      }
#endif
      out[t - first] = cpu_exact_sum<16, Acc>(count, access);
    }
    return 0;
  });
}

#endif  // FUSEKIT_SIMD_VECTORS

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
