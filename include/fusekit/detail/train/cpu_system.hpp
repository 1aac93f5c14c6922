// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The CPU trainer's system (detail/train/cpu.hpp runs the iterations): the
/// compute type, A = XᵀX and B = YᵀX formed in a fixed order, the products
/// with X that the direct formulation and CGLS take in place of A, the power
/// iteration's operator, the Jacobi scale, and the learning rate.

#include <fusekit/detail/core/cpu_parallel.hpp>
#include <fusekit/detail/reduce/cpu.hpp>
#include <fusekit/detail/train/conjugate_gradient.hpp>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/train/power_iteration.hpp>
#include <fusekit/detail/team/cpu_simd.hpp>
#include <fusekit/detail/team/cpu_team.hpp>
#include <fusekit/detail/train/checks.hpp>
#include <fusekit/detail/train/cholesky.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/tuning.hpp>
#include <fusekit/train_types.hpp>

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// The type a CPU fit computes in: double, for float data too. X and Y stay
/// as given (each value read is converted exactly); A, B, the iterates and
/// every sum are double, and a float W is rounded once at the end. So a float
/// fit is not limited by float sums (A = XᵀX formed in float is only about
/// κ(XᵀX)·2^-24 accurate).
using cpu_compute_t = double;

/// The least work (multiply-adds) of a trainer loop (the Gram matrix, a
/// residual, predict, one iteration over every output) at which helper
/// threads are woken (tuning.hpp, cpu_thread_tuning).
inline constexpr std::int64_t cpu_train_parallel_from = cpu_thread_tuning::train_parallel_from;

/// Rows per chunk of a row loop whose row costs `row_work` multiply-adds:
/// chunks of about cpu_thread_tuning::train_chunk_work.
inline std::int64_t cpu_train_row_grain(std::int64_t row_work) {
  constexpr std::int64_t chunk = cpu_thread_tuning::train_chunk_work;
  return row_work >= chunk ? 1 : chunk / (row_work > 0 ? row_work : 1);
}

/// Rows of X taken at a time while A = XᵀX is formed (they stay in cache
/// while every row of A passes over them).
inline constexpr std::int64_t gram_rows_per_block = 64;

/// Rows of A and B a pass of cpu_gram forms side by side (their weights are
/// broadcast, X's columns loaded once for all of them).
inline constexpr int gram_tile_rows = 4;

/// out_i[j] += w_i[k − k0]·x_kj for the R rows i of a tile, k from k0 to k1 in
/// order, j from `from` to L: each entry's additions in k order, one rounded
/// product and one rounded sum each (the code around it has no FMA), so the
/// bits of the one-row loop. In host vectors of `Bytes` (0: none) over 8
/// columns, then 4, the entries in registers across the rows of X; the last
/// columns one at a time.
template <int R, int Bytes, class C, class T>
FUSEKIT_FORCEINLINE void gram_tile(const T* x, std::int64_t L, std::int64_t k0, std::int64_t k1, std::int64_t from,
                                   const C (*w)[gram_rows_per_block], C* const* out) {
  std::int64_t j = from;
#if FUSEKIT_SIMD_VECTORS
  if constexpr (Bytes > 0 && std::is_same_v<C, double>) {
    using V = typename simd_vector<double, Bytes>::type;
    constexpr int lanes = Bytes / 8;
    // Columns j .. j + Width: Width / lanes vectors a row of the tile.
    auto const columns = [&](auto width) FUSEKIT_LAMBDA_INLINE {
      constexpr int G = decltype(width)::value / lanes;
      V acc[R][G];
      for (int i = 0; i < R; ++i) {
        for (int g = 0; g < G; ++g) { load_doubles<Bytes>(out[i] + j + g * lanes, acc[i][g]); }
      }
      for (std::int64_t k = k0; k < k1; ++k) {
        V xv[G];
        for (int g = 0; g < G; ++g) { load_doubles<Bytes>(x + k * L + j + g * lanes, xv[g]); }
        for (int i = 0; i < R; ++i) {
          double const s = w[i][k - k0];
          for (int g = 0; g < G; ++g) { acc[i][g] = acc[i][g] + s * xv[g]; }
        }
      }
      for (int i = 0; i < R; ++i) {
        for (int g = 0; g < G; ++g) { store_doubles<Bytes>(out[i] + j + g * lanes, acc[i][g]); }
      }
    };
    for (; j + 8 <= L; j += 8) { columns(std::integral_constant<int, 8>{}); }
    if (j + 4 <= L) {
      columns(std::integral_constant<int, 4>{});
      j += 4;
    }
  }
#endif
  // The last columns: rows of X outside, so that the entries' chains of
  // additions interleave.
  for (std::int64_t k = k0; k < k1 && j < L; ++k) {
    const T* const xk = x + k * L;
    for (int i = 0; i < R; ++i) {
      C const s = w[i][k - k0];
      FUSEKIT_SIMD_LOOP
      for (std::int64_t c = j; c < L; ++c) { out[i][c] = out[i][c] + s * static_cast<C>(xk[c]); }
    }
  }
}

/// A = XᵀX (L × L) and B = YᵀX (N × L, row n is b_n = Xᵀ y_n) in C, every entry
/// summed over k in order from C(0), whatever the blocking and the thread
/// count: rows of X are taken `gram_rows_per_block` at a time, a chunk owns
/// tiles of gram_tile_rows rows of A and B (gram_tile), and within a block each entry adds its terms in k order. The
/// upper triangle is summed and mirrored (x_ki·x_kj = x_kj·x_ki exactly).
/// With A null, B alone (the direct formulation, a refinement's RᵀX).
template <class C, class T, class U>
void cpu_gram(int threads, matrix<const T> X, matrix<const U> Y, std::vector<C>* A, std::vector<C>& B) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  std::int64_t const first = A != nullptr ? 0 : L;  // the rows of A, then B's
  if (A != nullptr) { A->assign(static_cast<std::size_t>(L * L), C(0)); }
  B.assign(static_cast<std::size_t>(N * L), C(0));
  const T* const x = X.data_handle();
  const U* const y = Y.data_handle();
  C* const a = A != nullptr ? A->data() : nullptr;
  C* const bm = B.data();
  // Tiles of rows of A and B in `groups` interleaved groups, a chunk each
  // (tile t in group t mod groups): a group streams X once, its entries in k order.
  std::int64_t const rows = L + N - first, work = K * L * rows;
  std::int64_t const tiles = (rows + gram_tile_rows - 1) / gram_tile_rows;
  std::int64_t const groups = work < cpu_train_parallel_from ? 1 : threads < tiles ? threads : tiles;
  cpu_for_chunks(threads, cpu_chunks{groups, groups}, work, cpu_train_parallel_from,
                 [&](std::int64_t group, std::int64_t, std::int64_t) {
                   C w[gram_tile_rows][gram_rows_per_block];
                   C* out[gram_tile_rows];
                   for (std::int64_t k0 = 0; k0 < K; k0 += gram_rows_per_block) {
                     std::int64_t const k1 = k0 + gram_rows_per_block < K ? k0 + gram_rows_per_block : K;
                     for (std::int64_t t = group; t < tiles; t += groups) {
                       // Rows r < L are A's (from column r on; the columns
                       // before r a row of the tile adds are below the
                       // diagonal, mirrored over below), the rest B's: b_n = Σ_k y_kn x_k.
                       std::int64_t const r0 = first + t * gram_tile_rows;
                       int const R = static_cast<int>(L + N - r0 < gram_tile_rows ? L + N - r0 : gram_tile_rows);
                       for (int i = 0; i < R; ++i) {
                         std::int64_t const r = r0 + i;
                         out[i] = r < L ? a + r * L : bm + (r - L) * L;
                       }
                       for (std::int64_t k = k0; k < k1; ++k) {  // the tile's R neighbouring columns, row by row
                         for (int i = 0; i < R; ++i) {
                           std::int64_t const r = r0 + i;
                           w[i][k - k0] = r < L ? static_cast<C>(x[k * L + r]) : static_cast<C>(y[k * N + (r - L)]);
                         }
                       }
                       std::int64_t const from = r0 + R <= L ? r0 : 0;  // a row of B: every column
                       isa_dispatch_same_bits_vectors([&](auto bytes) FUSEKIT_LAMBDA_INLINE {
                         constexpr int width = decltype(bytes)::value;
                         switch (R) {
                           case 1:
                             gram_tile<1, width>(x, L, k0, k1, from, w, out);
                             break;
                           case 2:
                             gram_tile<2, width>(x, L, k0, k1, from, w, out);
                             break;
                           case 3:
                             gram_tile<3, width>(x, L, k0, k1, from, w, out);
                             break;
                           default:
                             gram_tile<gram_tile_rows, width>(x, L, k0, k1, from, w, out);
                             break;
                         }
                       });
                     }
                   }
                 });
  for (std::int64_t i = 0; i < L && a != nullptr; ++i) {
    for (std::int64_t j = 0; j < i; ++j) { a[i * L + j] = a[j * L + i]; }
  }
}

/// out = X·v (K values) in C, each row summed over l in order.
template <class C, class T>
void rows_times(matrix<const T> X, const C* v, C* out) {
  std::int64_t const K = X.extent(0), L = X.extent(1);
  const T* const x = X.data_handle();
  for (std::int64_t k = 0; k < K; ++k) {
    C s = C(0);
    for (std::int64_t l = 0; l < L; ++l) { s = s + static_cast<C>(x[k * L + l]) * v[l]; }
    out[k] = s;
  }
}

/// out = Xᵀ·v (L values) in C, each summed over k in order.
template <class C, class T>
void columns_times(matrix<const T> X, const C* v, C* out) {
  std::int64_t const K = X.extent(0), L = X.extent(1);
  const T* const x = X.data_handle();
  for (std::int64_t l = 0; l < L; ++l) { out[l] = C(0); }
  for (std::int64_t k = 0; k < K; ++k) {
    C const d = v[k];
    for (std::int64_t l = 0; l < L; ++l) { out[l] = out[l] + static_cast<C>(x[k * L + l]) * d; }
  }
}

/// The direct formulation's gradient, the user's two products: delta = X·point − y_n,
/// g = Xᵀ·delta, sums in index order.
template <class C, class T, class U>
void direct_gradient(matrix<const T> X, matrix<const U> Y, std::int64_t n, const C* point, C* delta, C* g) {
  std::int64_t const K = X.extent(0), N = Y.extent(1);
  rows_times(X, point, delta);
  for (std::int64_t k = 0; k < K; ++k) { delta[k] = delta[k] - static_cast<C>(Y.data_handle()[k * N + n]); }
  columns_times(X, delta, g);
}

/// u = S Xᵀ(X S v) in double, XᵀX applied without forming it (the direct
/// formulation's operator for the power iteration); S = diag(scale), or I when
/// scale is null; t holds K doubles and sv L. `sum(u, L)` follows XᵀX's
/// product (a sum over MPI ranks; `no_processes` for one).
template <class T, class Sum>
struct normal_operator {
  matrix<const T> X;
  double* t;
  double* sv;
  const double* scale;
  Sum sum;
  FUSEKIT_HD void operator()(const double* v, double* u) const {
    std::int64_t const K = X.extent(0), L = X.extent(1);
    for (std::int64_t l = 0; l < L; ++l) { sv[l] = scale != nullptr ? scale[l] * v[l] : v[l]; }
    for (std::int64_t k = 0; k < K; ++k) {
      double s = 0;
      for (std::int64_t l = 0; l < L; ++l) { s += static_cast<double>(X(k, l)) * sv[l]; }
      t[k] = s;
    }
    for (std::int64_t l = 0; l < L; ++l) { u[l] = 0; }
    for (std::int64_t k = 0; k < K; ++k) {
      for (std::int64_t l = 0; l < L; ++l) { u[l] += static_cast<double>(X(k, l)) * t[k]; }
    }
    sum(u, L);
    if (scale != nullptr) {
      for (std::int64_t l = 0; l < L; ++l) { u[l] = scale[l] * u[l]; }
    }
  }
};

/// λ of XᵀX without forming it (the direct formulation); with `scale` (L
/// values, or null), of S XᵀX S. `sum` as in normal_operator.
template <class T, class Sum>
double cpu_direct_power_iteration(matrix<const T> X, const double* scale, const Sum& sum) {
  std::int64_t const L = X.extent(1);
  std::vector<double> v(static_cast<std::size_t>(L)), u(v.size()), t(static_cast<std::size_t>(X.extent(0))),
      sv(v.size());
  return power_iteration(serial_team{}, L, v.data(), u.data(),
                         normal_operator<T, Sum>{X, t.data(), sv.data(), scale, sum});
}

/// y_n's values, k < K, in C (column n of Y, K × N).
template <class T, class C>
struct column_of {
  const T* data;
  std::int64_t stride;
  FUSEKIT_HD FUSEKIT_FORCEINLINE C operator()(std::int64_t k) const { return static_cast<C>(data[k * stride]); }
};

/// A reference to element k.
template <class C>
struct reference_of {
  C* data;
  FUSEKIT_HD FUSEKIT_FORCEINLINE C& operator()(std::int64_t k) const { return data[k]; }
};

/// What every output's iterations read, in C: A and B (B = YᵀX, row n is b_n,
/// made for every formulation: the stopping rules need b_n), the diagonal of
/// XᵀX (direct), and c of the rounding floor (descent.hpp).
template <class C>
struct cpu_system {
  bool gram = false;
  std::vector<C> A, B, diagonal;
  double floor_multiplier = 0;  ///< L + 1 (Gram) or 2(K + L) (direct)
  bool cholesky = false;        ///< the Cholesky preconditioner runs (`factor`)
  cholesky_factor factor;

  /// The Cholesky factor of A, when `o` asks for it and the fit can take it
  /// (CG on the Gram formulation, L ≤ cholesky_max_columns): see cholesky.hpp.
  void factor_if_asked(const gd_options& o, std::int64_t L) {
    cholesky = o.preconditioner == gd_preconditioner::cholesky && gram && L <= cholesky_max_columns;
    if (cholesky) { factor = make_cholesky(A.data(), L); }
  }
  /// Whether the fit should leave A for X: the factor needed a shift, so A
  /// is singular to working precision (κ(A') ≳ 1/(L·u)) and its rounding
  /// bounds any solve on it, while CGLS, preconditioned by the same factor,
  /// works on X (κ rather than κ²). Only where the formulation is automatic.
  [[nodiscard]] bool leaves_gram(const gd_options& o) const {
    return cholesky && (factor.shift != 0 || factor.smallest_pivot < gram_pivot_limit) &&
           o.formulation == gd_formulation::automatic;
  }
  /// The direct formulation from the Gram one: XᵀX's diagonal from A, B kept.
  void to_direct(std::int64_t total_rows, std::int64_t L) {
    diagonal.resize(static_cast<std::size_t>(L));
    for (std::int64_t i = 0; i < L; ++i) { diagonal[i] = A[i * L + i]; }
    A = std::vector<C>();
    gram = false;
    floor_multiplier = 2.0 * static_cast<double>(total_rows + L);
  }

  /// XᵀX's diagonal as the steps read it (the preconditioner and the metric).
  [[nodiscard]] diagonal_scaling<C> scaling(const descent_params<C>& p, std::int64_t L) const {
    return gram ? make_scaling(p, A.data(), L + 1) : make_scaling(p, diagonal.data(), 1);
  }
};

/// The system of a fit on this process's rows. `sum(values, count)` sums C
/// values over the processes (MPI; nothing for one), and `total_rows` is K over
/// all of them.
template <class C, class T, class SumOverProcesses>
cpu_system<C> make_cpu_system(int threads, bool gram, matrix<const T> X, matrix<const T> Y, std::int64_t total_rows,
                              const SumOverProcesses& sum) {
  std::int64_t const L = X.extent(1), N = Y.extent(1);
  cpu_system<C> sys;
  sys.gram = gram;
  if (gram) {
    cpu_gram(threads, X, Y, &sys.A, sys.B);
    sum(sys.A.data(), L * L);
    sum(sys.B.data(), N * L);
    sys.floor_multiplier = static_cast<double>(L + 1);
    return sys;
  }
  cpu_gram<C>(threads, X, Y, nullptr, sys.B);
  sum(sys.B.data(), N * L);
  std::int64_t const K = X.extent(0);
  sys.diagonal.assign(static_cast<std::size_t>(L), C(0));
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t l = 0; l < L; ++l) {
      C const v = static_cast<C>(X(k, l));
      sys.diagonal[l] = sys.diagonal[l] + v * v;
    }
  }
  sum(sys.diagonal.data(), L);
  sys.floor_multiplier = 2.0 * static_cast<double>(total_rows + L);
  return sys;
}

/// The learning rate of a fit: the caller's, unused by CG, else 1/λmax of
/// XᵀX (of M^½ XᵀX M^½ with Jacobi), a positive finite C, by the power
/// iteration on A (Gram) or by `direct_lambda(scale)` (direct: scale is M^½'s
/// diagonal, or null).
template <class C, class DirectLambda>
double cpu_learning_rate(const gd_options& o, const cpu_system<C>& sys, std::int64_t L,
                         const DirectLambda& direct_lambda) {
  if (o.learning_rate) { return *o.learning_rate; }
  if (o.method == gd_method::conjugate_gradient) { return 0.0; }
  bool const jacobi = o.preconditioner == gd_preconditioner::jacobi;
  if (sys.gram) {
    std::vector<double> v(static_cast<std::size_t>(L)), u(v.size());
    return automatic_learning_rate<C>(
        symmetric_power_iteration(serial_team{}, sys.A.data(), L, v.data(), u.data(), jacobi));
  }
  std::vector<double> scale;
  if (jacobi) {
    for (const C d : sys.diagonal) { scale.push_back(std::sqrt(static_cast<double>(jacobi_entry(d)))); }
  }
  return automatic_learning_rate<C>(direct_lambda(jacobi ? scale.data() : nullptr));
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
