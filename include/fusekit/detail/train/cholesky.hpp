// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The Cholesky preconditioner of conjugate gradients (gd_preconditioner::cholesky):
///
///     A' = S A S,  S = diag(1/√a_ii)  (0 for a column of zeros, whose row
///                                      and column of A' become the identity's)
///     A' + δI = G Gᵀ                  (G lower triangular; δ = 0 first)
///     M = S (G Gᵀ)⁻¹ S                z = M r by two triangular solves
///
/// With δ = 0, M = A⁻¹ up to the rounding of A and of the factorization, so
/// preconditioned CG ends in one or two updates whatever κ(A) is, and the
/// refinement from X (gd_options::refinement_steps) takes the error below A's
/// rounding. The scaling first makes the factorization insensitive to the
/// features' units (a tiny column's 1/√a_ii is computed as such, never as
/// √(1/a_ii), which overflows for a subnormal a_ii).
///
/// When a pivot is not above `pivot_floor`·L·u (A' singular to working
/// precision: dependent columns, K < L, κ(A') near 1/u), the factorization is
/// retried with δ = 10^-14·L, then 100 times larger each time, at most
/// `max_shifts` times (δ ≥ 1 always succeeds on a positive semidefinite A'). M is then
/// a preconditioner, not the inverse: CG takes a few more updates, and on a
/// singular A reaches a least-squares solution, not the minimum-norm one.
///
/// O(L³/3) once, O(L²) per update, L² doubles: `cholesky_max_columns` bounds L.

#include <fusekit/detail/base/numeric.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// The largest L for which `gd_preconditioner::cholesky` factors A (above
/// it, Jacobi): the factor takes L² doubles (32 MiB at 2048) and L³/3 flops,
/// less than forming A (K·L²) whenever K > L/3.
inline constexpr std::int64_t cholesky_max_columns = 2048;

/// The smallest pivot of the Cholesky factor below which an automatic fit
/// leaves A for X (cpu_system::leaves_gram): measured on polynomial,
/// Vandermonde and decaying-spectrum designs, Gram with refinement reaches
/// 1e-10 above it (pivots of 4e-10 and 1.3e-9, κ(X) about 10^6), and stalls
/// far from the solution at 2e-12 (docs/trainer.md, "Every kind of data").
inline constexpr double gram_pivot_limit = 1e-10;

/// A pivot of A' (unit diagonal) at or below this times L·u is a breakdown.
inline constexpr double pivot_floor = 4.0;

/// The most shifted retries of the factorization.
inline constexpr int max_shifts = 9;

/// G G ᵀ = A' + δI, and S (see the file comment).
struct cholesky_factor {
  std::vector<double> G;      ///< L × L, row-major, lower triangle
  std::vector<double> s;      ///< S's diagonal
  double shift = 0;           ///< δ
  double smallest_pivot = 0;  ///< the smallest G_jj² (A' has a unit diagonal: at most 1)
  std::int64_t L = 0;

  /// z = S (G Gᵀ)⁻¹ S r, the sums in a fixed order; z may not alias r.
  template <class C>
  void apply(const C* r, C* z) const {
    for (std::int64_t i = 0; i < L; ++i) {  // G u = S r
      const double* const g = G.data() + i * L;
      double v = s[i] * static_cast<double>(r[i]);
      for (std::int64_t k = 0; k < i; ++k) { v -= g[k] * static_cast<double>(z[k]); }
      z[i] = static_cast<C>(v / g[i]);
    }
    for (std::int64_t i = L - 1; i >= 0; --i) {  // Gᵀ v = u, by columns of Gᵀ (rows of G)
      const double* const g = G.data() + i * L;
      double const v = static_cast<double>(z[i]) / g[i];
      z[i] = static_cast<C>(v);
      for (std::int64_t k = 0; k < i; ++k) { z[k] = static_cast<C>(static_cast<double>(z[k]) - g[k] * v); }
    }
    for (std::int64_t i = 0; i < L; ++i) { z[i] = static_cast<C>(s[i] * static_cast<double>(z[i])); }
  }
};

/// G Gᵀ = M in place (lower triangle of M, row-major L × L); false on a pivot
/// at or below `least` (or not finite). Row i's entries are dot products of
/// rows i and j of G, each summed in k order.
inline bool cholesky_in_place(std::vector<double>& M, std::int64_t L, double least) {
  for (std::int64_t j = 0; j < L; ++j) {
    double* const gj = M.data() + j * L;
    double d = gj[j];
    for (std::int64_t k = 0; k < j; ++k) { d -= gj[k] * gj[k]; }
    if (!(d > least) || !is_finite(d)) { return false; }
    d = std::sqrt(d);
    gj[j] = d;
    for (std::int64_t i = j + 1; i < L; ++i) {
      double* const gi = M.data() + i * L;
      double v = gi[j];
      for (std::int64_t k = 0; k < j; ++k) { v -= gi[k] * gj[k]; }
      gi[j] = v / d;
    }
  }
  return true;
}

/// The factor of A (L × L, row-major, symmetric), as the file comment says.
/// Always succeeds for a finite positive semidefinite A.
template <class C>
cholesky_factor make_cholesky(const C* A, std::int64_t L) {
  cholesky_factor f;
  f.L = L;
  f.s.assign(static_cast<std::size_t>(L), 0.0);
  for (std::int64_t i = 0; i < L; ++i) {
    double const a = static_cast<double>(A[i * L + i]);
    f.s[i] = a > 0 ? 1.0 / std::sqrt(a) : 0.0;
  }
  double const least = pivot_floor * static_cast<double>(L) * 0x1p-53;
  for (int attempt = 0; attempt <= max_shifts; ++attempt) {
    f.shift = attempt == 0 ? 0.0 : 1e-14 * static_cast<double>(L) * std::pow(100.0, attempt - 1);
    f.G.assign(static_cast<std::size_t>(L * L), 0.0);
    for (std::int64_t i = 0; i < L; ++i) {
      for (std::int64_t j = 0; j <= i; ++j) { f.G[i * L + j] = f.s[i] * static_cast<double>(A[i * L + j]) * f.s[j]; }
      f.G[i * L + i] = (f.s[i] > 0 ? f.G[i * L + i] : 1.0) + f.shift;
    }
    if (cholesky_in_place(f.G, L, least)) {
      f.smallest_pivot = 1.0;
      for (std::int64_t i = 0; i < L; ++i) {
        double const g = f.G[i * L + i];
        f.smallest_pivot = g * g < f.smallest_pivot ? g * g : f.smallest_pivot;
      }
      return f;
    }
  }
  // Not positive semidefinite in the arithmetic even with δ = 10^2·L: the identity.
  f.shift = -1;
  f.G.assign(static_cast<std::size_t>(L * L), 0.0);
  for (std::int64_t i = 0; i < L; ++i) { f.G[i * L + i] = 1.0; }
  return f;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
