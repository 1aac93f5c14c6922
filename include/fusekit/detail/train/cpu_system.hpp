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

/// A = XᵀX (L × L) and B = YᵀX (N × L, row n is b_n = Xᵀ y_n) in C, every entry
/// summed over k in order from C(0), whatever the blocking and the thread
/// count: rows of X are taken `gram_rows_per_block` at a time, a chunk owns
/// rows of A and B, and within a block each entry adds its terms in k order. The
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
  // Rows of A and B in `groups` interleaved groups, a chunk each (row r in
  // group (r − first) mod groups): a group streams X once, its rows' entries in k order.
  std::int64_t const rows = L + N - first, work = K * L * rows;
  std::int64_t const groups = work < cpu_train_parallel_from ? 1 : threads < rows ? threads : rows;
  cpu_for_chunks(threads, cpu_chunks{groups, groups}, work, cpu_train_parallel_from,
                 [&](std::int64_t group, std::int64_t, std::int64_t) {
                   for (std::int64_t k0 = 0; k0 < K; k0 += gram_rows_per_block) {
                     std::int64_t const k1 = k0 + gram_rows_per_block < K ? k0 + gram_rows_per_block : K;
                     for (std::int64_t r = first + group; r < L + N; r += groups) {
                       // Rows r < L are A's (from column r on), the rest B's: b_n = Σ_k y_kn x_k.
                       bool const is_a = r < L;
                       std::int64_t const from = is_a ? r : 0;
                       C* const out = is_a ? a + r * L : bm + (r - L) * L;
                       auto const weight = [&](std::int64_t k) {
                         return is_a ? static_cast<C>(x[k * L + r]) : static_cast<C>(y[k * N + (r - L)]);
                       };
                       isa_dispatch_same_bits([&]() FUSEKIT_LAMBDA_INLINE {
                         std::int64_t k = k0;
                         // Four rows per pass over out: the same additions in the same order,
                         // out[j] kept in a register between them.
                         for (; k + 4 <= k1; k += 4) {
                           C const s0 = weight(k), s1 = weight(k + 1), s2 = weight(k + 2), s3 = weight(k + 3);
                           const T* const x0 = x + k * L;
                           const T* const x1 = x0 + L;
                           const T* const x2 = x1 + L;
                           const T* const x3 = x2 + L;
                           FUSEKIT_SIMD_LOOP
                           for (std::int64_t j = from; j < L; ++j) {
                             C v = out[j] + s0 * static_cast<C>(x0[j]);
                             v = v + s1 * static_cast<C>(x1[j]);
                             v = v + s2 * static_cast<C>(x2[j]);
                             out[j] = v + s3 * static_cast<C>(x3[j]);
                           }
                         }
                         for (; k < k1; ++k) {
                           C const sk = weight(k);
                           const T* const xk = x + k * L;
                           FUSEKIT_SIMD_LOOP
                           for (std::int64_t j = from; j < L; ++j) { out[j] = out[j] + sk * static_cast<C>(xk[j]); }
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
