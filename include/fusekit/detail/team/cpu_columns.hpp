// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CPU team's column pass and pairwise steps (`basic_serial_team`,
/// detail/team/team.hpp) in explicit host SIMD vectors, for plus, minimum and
/// maximum: where the deterministic tree's tiles spend their time.
///
/// Lane l combines rows 0, 1, ..., R − 1 in that order, as the GPU's block
/// does; a vector holds W consecutive lanes, so the order of every lane, and
/// with it every bit, is the tree's. An array of Acc, or of a narrower type
/// widened into Acc (float into double, 32-bit integers into 64-bit ones), is
/// read row after row, in address order, its lanes kept in L1 between rows;
/// any other source goes 8 rows at a time per vector of lanes, in registers
/// (cpu_column_reduce). (A tile of an array of integers summed into a 64-bit
/// integer is one exact sum instead: detail/reduce/cpu_exact_tiles.hpp.)
///
/// Additions of floating-point values pass through an empty asm on both
/// operands, as vectors: no compiler looks through it, so none regroups the
/// chain (`-ffast-math`'s reassociation) or fuses a product of the source into
/// the add (FMA contraction, under `-mfma` or in the AVX2+FMA clone of
/// detail/core/cpu_parallel.hpp), and yet the loop stays vector code. (detail/base/rounding.hpp's
/// scalar barrier does the same for one value, and keeps a loop scalar.)
///
/// GCC and Clang on x86-64 and AArch64 (vector extensions); elsewhere, and in
/// the device pass, `vector_columns` is false and the team keeps its row loop.

#include <fusekit/detail/team/cpu_simd.hpp>
#include <fusekit/tuning.hpp>

#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace team {

#if FUSEKIT_SIMD_VECTORS

/// Whether an array of T is read into Acc lanes as T vectors, widened in
/// registers: a narrower type of the same kind (float into double, 32-bit
/// integers into 64-bit ones), where the conversion is exact.
template <class T, class Acc>
inline constexpr bool widened_load_v = std::is_arithmetic_v<T>&& std::is_arithmetic_v<Acc> && sizeof(T) < sizeof(Acc) &&
                                       sizeof(T) >= 4 && std::is_floating_point_v<T> == std::is_floating_point_v<Acc>;

/// Bytes per element of the tile's source: T's for an array, Acc's otherwise
/// (a source with no array behind it, value_type void).
template <class T, class Acc>
inline constexpr std::int64_t element_bytes_v =
    static_cast<std::int64_t>(sizeof(std::conditional_t<std::is_void_v<T>, Acc, T>));

/// v = the Bytes / sizeof(Acc) values of T at p, each converted to Acc. Float
/// into double in 32 bytes is one `vcvtps2pd` from memory: gcc 12's
/// __builtin_convertvector there loads two 8-byte halves, converts each and
/// inserts one into the other, 4 instructions where this is 1.
template <int Bytes, class Acc, class T, class V>
FUSEKIT_FORCEINLINE void load_widened(V& v, const T* p) {
  using VT = typename simd_vector<T, Bytes / static_cast<int>(sizeof(Acc) / sizeof(T))>::unaligned;
  using VA = typename simd_vector<Acc, Bytes>::type;
#if defined(__x86_64__) && !defined(__clang__)  // Clang: a 32-byte operand needs AVX in this function
  if constexpr (Bytes == 32 && std::is_same_v<T, float> && std::is_same_v<Acc, double>) {
    VA wide;
    __asm__("vcvtps2pd {%1, %0|%0, %1}" : "=x"(wide) : "m"(*reinterpret_cast<const VT*>(p)));
    std::memcpy(&v, &wide, sizeof v);
    return;
  }
#endif
  VT t;
  std::memcpy(&t, p, sizeof t);
  VA const wide = __builtin_convertvector(t, VA);
  std::memcpy(&v, &wide, sizeof v);
}

/// One tile's column pass in vectors of `Bytes` bytes: its lanes, its source
/// (`value`, and `access`, the tile's tile_access of detail/reduce/source.hpp,
/// which prefetches the rows to come and reads arrays) and the length c0 of
/// its first row. Its steps are always_inline member functions rather than
/// lambdas: nvcc's front end drops the attributes of a lambda, and a lambda
/// left out of line is compiled for the baseline ISA, where a 32-byte vector
/// has no register (the barrier's asm then does not compile without -O).
template <int Bytes, int Rows, class Op, class Acc, class Value, class Access>
struct column_tile {
  using E = lane_element_t<Op, Acc>;
  using V = typename simd_vector<E, Bytes>::type;
  using T = typename Access::value_type;
  static constexpr int W = Bytes / static_cast<int>(sizeof(Acc));

  Acc* lane;
  const Value& value;
  const Access& access;
  std::int64_t c0;

  // Row r starts at element r·c0 of the tile, as the team's contract says
  // (in the last tile, a row past the first has values only when row 0 is
  // full). An array of Acc is read as one vector per row, and an array of a
  // narrower T of the same kind (float into double, 32-bit integers into
  // 64-bit ones) as a T vector widened in registers (__builtin_convertvector:
  // the exact static_cast, lane by lane). Read value by value, gcc at -O2
  // assembled each vector through the stack (two 16-byte stores, then a
  // 32-byte load that store forwarding cannot serve).
  FUSEKIT_FORCEINLINE void load_row(V& v, int r, std::int64_t l) const {
    if constexpr (std::is_same_v<T, Acc> && std::is_arithmetic_v<Acc>) {
      std::memcpy(&v, access.values(r * c0 + l), sizeof v);
    } else if constexpr (widened_load_v<T, Acc>) {
      load_widened<Bytes, Acc>(v, access.values(r * c0 + l));
    } else {
      Acc t[W];
      for (int k = 0; k < W; ++k) { t[k] = value(r, l + k); }
      std::memcpy(&v, t, sizeof v);
    }
  }

  FUSEKIT_FORCEINLINE E* lanes() const { return reinterpret_cast<E*>(lane); }

  /// The vector of lanes at l given row r: row 0 stores it, a later row is
  /// combined into the lanes (loaded, combined, stored).
  FUSEKIT_FORCEINLINE void row_vector(int r, std::int64_t l) const {
    V v;
    load_row(v, r, l);
    if (r > 0) {
      V acc;
      get_lanes<Bytes>(acc, lanes() + l);
      vector_combine<Op, E>(acc, v);
      v = acc;
    }
    put_lanes<Bytes>(lanes() + l, v);
  }

  /// row_vector for the Q vectors from l, written out.
  template <int Q>
  FUSEKIT_FORCEINLINE void row_vectors(int r, std::int64_t l) const {
    row_vector(r, l);
    if constexpr (Q > 1) { row_vectors<Q - 1>(r, l + W); }
  }

  /// acc ⊕= rows r, r + 1, ..., r + N − 1 at lanes l (v: scratch), written out.
  template <int N>
  FUSEKIT_FORCEINLINE void combine_rows(V& acc, V& v, int r, std::int64_t l) const {
    if constexpr (N > 0) {
      load_row(v, r, l);
      vector_combine<Op, E>(acc, v);
      combine_rows<N - 1>(acc, v, r + 1, l);
    }
  }

  /// The lanes past the last whole vector of a full tile, one by one.
  FUSEKIT_FORCEINLINE void tail_columns() const {
    for (std::int64_t l = c0 / W * W; l < c0; ++l) {
      Acc a = value(0, l);
      for (int r = 1; r < Rows; ++r) { a = scalar_combine<Op>(a, value(r, l)); }
      lane[l] = a;
    }
  }
};

/// lane[l] = value(0, l) ⊕ value(1, l) ⊕ ... ⊕ value(Rows − 1, l), row r for
/// l < count(r) only (count non-increasing), in vectors of `Bytes` bytes.
/// `access` is the tile's tile_access (detail/reduce/source.hpp): it prefetches
/// the rows to come, and reads arrays.
template <int Bytes, int Rows, class Op, class Acc, class Count, class Value, class Access>
FUSEKIT_FORCEINLINE void cpu_column_reduce(Acc* lane, const Count& count, const Value& value, const Access& access) {
  using tile = column_tile<Bytes, Rows, Op, Acc, Value, Access>;
  using V = typename tile::V;
  using T = typename tile::T;
  constexpr int W = tile::W;
  std::int64_t const c0 = count(0);
  tile const t{lane, value, access, c0};
  if (count(Rows - 1) == c0) {  // every row as long as the first: a full tile
    if constexpr (std::is_same_v<T, Acc> || widened_load_v<T, Acc>) {
      // An array of Acc, or of a narrower T widened: row after row, in
      // address order, so the tile streams in as a plain read loop reads an
      // array (the hardware prefetcher follows one stream; the loop prefetches
      // each line prefetch_far_bytes ahead into L2 and prefetch_ahead_bytes
      // ahead into L1), while each vector of lanes goes through L1: loaded,
      // combined with its row, stored. 8 rows per vector of lanes in
      // registers (below) would read a tile as 8 interleaved streams, which
      // the hardware prefetchers follow less well (docs/performance.md).
      std::int64_t const body = c0 / W * W;
      constexpr std::int64_t ahead = cpu_stream_tuning::prefetch_ahead_bytes / element_bytes_v<T, Acc>;
      constexpr std::int64_t far = cpu_stream_tuning::prefetch_far_bytes / element_bytes_v<T, Acc>;
      // The vectors of a row in groups that read one 64-byte line of it, its
      // prefetches once per group (a prefetch per vector cost float into
      // double, 16 bytes a vector, two load slots per 4 values).
      constexpr int group = 64 / (W * element_bytes_v<T, Acc>) > 1 ? 64 / (W * element_bytes_v<T, Acc>) : 1;
      std::int64_t const grouped = body / (group * W) * (group * W);
      for (int r = 0; r < Rows; ++r) {
        for (std::int64_t l = 0; l < grouped; l += group * W) {
          access.prefetch_far(r * c0 + l + far, group * W);
          access.prefetch(r * c0 + l + ahead, group * W);
          t.template row_vectors<group>(r, l);
        }
        for (std::int64_t l = grouped; l < body; l += W) { t.row_vector(r, l); }
      }
      t.tail_columns();
    } else {
      // A source read value by value (an array converted into Acc otherwise
      // than widened): rows in batches of 8, a vector of lanes loaded once,
      // given 8 rows in registers and stored once. The rows two batches on
      // are prefetched meanwhile, a slice per vector.
      constexpr int batch = Rows % 8 == 0 ? 8 : 1;
      std::int64_t const body = c0 / W * W;
      for (int r0 = 0; r0 < Rows; r0 += batch) {
        for (std::int64_t l = 0; l < body; l += W) {
          access.prefetch((r0 + 2 * batch) * c0 + batch * l, batch * W);
          V acc, v;
          if (r0 == 0) {
            t.load_row(acc, 0, l);
          } else {
            get_lanes<Bytes>(acc, t.lanes() + l);
            t.load_row(v, r0, l);
            vector_combine<Op, typename tile::E>(acc, v);
          }
          t.template combine_rows<batch - 1>(acc, v, r0 + 1, l);
          put_lanes<Bytes>(t.lanes() + l, acc);
        }
      }
      t.tail_columns();
    }
    return;
  }
  // Rows of different lengths (the last tile of a level): row by row.
  for (std::int64_t l = 0; l < c0; ++l) { lane[l] = value(0, l); }
  for (int r = 1; r < Rows; ++r) {
    std::int64_t const c = count(r);
    std::int64_t const body = c / W * W;
    for (std::int64_t l = 0; l < body; l += W) {
      V acc, v;
      get_lanes<Bytes>(acc, t.lanes() + l);
      t.load_row(v, r, l);
      vector_combine<Op, typename tile::E>(acc, v);
      put_lanes<Bytes>(t.lanes() + l, acc);
    }
    for (std::int64_t l = body; l < c; ++l) { lane[l] = scalar_combine<Op>(lane[l], value(r, l)); }
  }
}

/// lane[l] = op(lane[l], lane[l + s]) for l < pairs (pairs ≤ s), in vectors of
/// `Bytes` bytes where W whole lanes remain: a step of the tree's pairwise
/// phase, each lane combined as the scalar step would.
template <int Bytes, class Op, class Acc>
FUSEKIT_FORCEINLINE void cpu_combine_pairs(Acc* lane, std::int64_t pairs, std::int64_t s) {
  using E = lane_element_t<Op, Acc>;
  using V = typename simd_vector<E, Bytes>::type;
  constexpr int W = Bytes / static_cast<int>(sizeof(Acc));
  E* const lanes = reinterpret_cast<E*>(lane);
  std::int64_t const body = pairs / W * W;  // l + W ≤ pairs ≤ s: no vector reads what another writes
  for (std::int64_t l = 0; l < body; l += W) {
    V a, b;
    get_lanes<Bytes>(a, lanes + l);
    get_lanes<Bytes>(b, lanes + l + s);
    vector_combine<Op, E>(a, b);
    put_lanes<Bytes>(lanes + l, a);
  }
  for (std::int64_t l = body; l < pairs; ++l) { lane[l] = scalar_combine<Op>(lane[l], lane[l + s]); }
}

/// cpu_column_reduce in 32-byte vectors, compiled for AVX2 whatever the
/// caller's target (the dispatch calls it only where the CPU has AVX2): the
/// barrier's vector register then exists, also where the caller was not
/// inlined into an AVX2 function. Not inlined (one call per tile), so that
/// its code can be inspected (tests/codegen/check_host_tree.cmake).
#if defined(__x86_64__)
template <int Rows, class Op, class Acc, class Count, class Value, class Access>
__attribute__((target("avx2,fma"), noinline, flatten)) inline void cpu_column_reduce_avx2(Acc* lane, const Count& count,
                                                                                          const Value& value,
                                                                                          const Access& access) {
  cpu_column_reduce<32, Rows, Op>(lane, count, value, access);
}

/// cpu_combine_pairs in 32-byte vectors, compiled for AVX2 (as above).
template <class Op, class Acc>
__attribute__((target("avx2,fma"), noinline, flatten)) inline void cpu_combine_pairs_avx2(Acc* lane, std::int64_t pairs,
                                                                                          std::int64_t s) {
  cpu_combine_pairs<32, Op>(lane, pairs, s);
}
#endif

#endif  // FUSEKIT_SIMD_VECTORS

}  // namespace team
}  // namespace detail
}  // namespace fusekit
