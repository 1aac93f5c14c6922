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
/// Both the factorization (`cholesky_factor_body`) and the solve
/// (`cholesky_solve`) are team bodies (detail/team/team.hpp): the CPU runs
/// them on a serial_team, the GPU in one thread block (the factor once per
/// fit, the solve in each output's block at every CG update). Every value is
/// computed by one member, its sum in index order, as the serial loops add
/// it, so every team gives the same bits: member i takes row i of a column
/// of G (left-looking, one barrier per column), and a solve takes one column
/// of G per barrier. The work is O(L³/3) flops once and O(L²) per update,
/// with L barriers in the factor and 2L + 2 in each solve; the memory is
/// L² + L doubles, plus L doubles of scratch per output (`cholesky_max_columns`
/// bounds L). A blocked factorization (cuSOLVER's potrf) would be faster for
/// large L on the GPU, but it is another algorithm with other bits, and its
/// breakdown is not the pivot test above: fusekit keeps the one factorization
/// on every backend.

#include <fusekit/config.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/team/cpu_team.hpp>
#include <fusekit/detail/team/team.hpp>

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

/// δ of the factorization's attempt `attempt` (0: none): 10^-14·L·100^(attempt−1),
/// the power of 100 as a product (exact up to 100^8), the same on every backend.
FUSEKIT_HD inline double cholesky_shift(int attempt, std::int64_t L) {
  if (attempt == 0) { return 0.0; }
  double power = 1.0;
  for (int a = 1; a < attempt; ++a) { power *= 100.0; }
  return 1e-14 * static_cast<double>(L) * power;
}

/// What the factorization found, which every member of its team returns.
struct cholesky_outcome {
  double shift = 0;           ///< δ; −1 when no shift succeeded and G is the identity
  double smallest_pivot = 0;  ///< the smallest G_jj² (A' has a unit diagonal: at most 1)
};

/// G Gᵀ = M in place (the lower triangle of M, row-major L × L, which every
/// member may read); false on a pivot at or below `least` (or not finite), the
/// same answer on every member. Column j: every member computes the pivot
/// d_j = m_jj − Σ_k<j g_jk² (the same bits), then member i computes
/// g_ij = (m_ij − Σ_k<j g_ik g_jk)/√d_j for its rows i > j, each sum in k
/// order; one barrier per column. g_jj is written by the leader in the next
/// column's turn (no member reads it after column j), and after the last.
template <class Team>
FUSEKIT_HD bool cholesky_in_place(const Team& team, double* M, std::int64_t L, double least) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  double pivot = 0;  // √d of the previous column, which the leader writes
  for (std::int64_t j = 0; j < L; ++j) {
    const double* const gj = M + j * L;
    double d = gj[j];
    for (std::int64_t k = 0; k < j; ++k) { d -= gj[k] * gj[k]; }
    if (!(d > least) || !is_finite(d)) {
      team.sync();  // every member has read what the next attempt overwrites
      return false;
    }
    if (j > 0 && team.leader()) { M[(j - 1) * L + (j - 1)] = pivot; }
    pivot = std::sqrt(d);
    std::int64_t r0 = 0;
    if constexpr (is_serial_team_v<Team>) {  // four rows' chains side by side, each in k order
      for (; r0 + 4 <= L - j - 1; r0 += 4) {
        double* const g0 = M + (j + 1 + r0) * L;
        double* const g1 = g0 + L;
        double* const g2 = g1 + L;
        double* const g3 = g2 + L;
        double v0 = g0[j], v1 = g1[j], v2 = g2[j], v3 = g3[j];
        for (std::int64_t k = 0; k < j; ++k) {
          v0 -= g0[k] * gj[k];
          v1 -= g1[k] * gj[k];
          v2 -= g2[k] * gj[k];
          v3 -= g3[k] * gj[k];
        }
        g0[j] = v0 / pivot;
        g1[j] = v1 / pivot;
        g2[j] = v2 / pivot;
        g3[j] = v3 / pivot;
      }
    }
    team.for_each(L - j - 1 - r0, [&](std::int64_t r) {
      double* const gi = M + (j + 1 + r0 + r) * L;
      double v = gi[j];
      for (std::int64_t k = 0; k < j; ++k) { v -= gi[k] * gj[k]; }
      gi[j] = v / pivot;
    });
    team.sync();
  }
  if (L > 0 && team.leader()) { M[(L - 1) * L + (L - 1)] = pivot; }
  team.sync();
  return true;
}

/// The factor of A (L × L, row-major, symmetric, in C) into G (L × L doubles,
/// row-major, lower triangle; the upper is 0) and s (S's diagonal, L doubles),
/// as the file comment says. Always succeeds for a finite positive
/// semidefinite A; every member returns the outcome.
template <class Team, class C>
FUSEKIT_HD cholesky_outcome cholesky_factor_body(const Team& team, const C* A, std::int64_t L, double* G, double* s) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  team.for_each(L, [&](std::int64_t i) {
    double const a = static_cast<double>(A[i * L + i]);
    s[i] = a > 0 ? 1.0 / std::sqrt(a) : 0.0;
  });
  team.sync();
  double const least = pivot_floor * static_cast<double>(L) * 0x1p-53;
  cholesky_outcome out;
  for (int attempt = 0; attempt <= max_shifts; ++attempt) {
    out.shift = cholesky_shift(attempt, L);
    auto const scaled = [&](std::int64_t i, std::int64_t j) {
      std::int64_t const e = i * L + j;
      double v = j <= i ? s[i] * static_cast<double>(A[e]) * s[j] : 0.0;
      if (i == j) { v = (s[i] > 0 ? v : 1.0) + out.shift; }
      G[e] = v;
    };
    if constexpr (is_serial_team_v<Team>) {  // by rows, without a division per entry
      for (std::int64_t i = 0; i < L; ++i) {
        for (std::int64_t j = 0; j < L; ++j) { scaled(i, j); }
      }
    } else {
      team.for_each(L * L, [&](std::int64_t e) { scaled(e / L, e % L); });
    }
    team.sync();
    if (cholesky_in_place(team, G, L, least)) {
      out.smallest_pivot = 1.0;
      for (std::int64_t i = 0; i < L; ++i) {
        double const g = G[i * L + i];
        out.smallest_pivot = g * g < out.smallest_pivot ? g * g : out.smallest_pivot;
      }
      team.sync();  // every member has read the pivots before a caller reuses G
      return out;
    }
  }
  // Not positive semidefinite in the arithmetic even with δ = 10^2·L: the identity.
  out.shift = -1;
  out.smallest_pivot = 0;
  team.for_each(L * L, [&](std::int64_t e) { G[e] = e / L == e % L ? 1.0 : 0.0; });
  team.sync();
  return out;
}

/// z = S (G Gᵀ)⁻¹ S r for the factor (G, s) of cholesky_factor_body, by one
/// team; t is L doubles of scratch; z may alias neither r nor t. Forward,
/// G u = S r, by columns: member i keeps t_i = s_i r_i − Σ_k<i g_ik u_k, adding
/// one column per barrier, and u_i = t_i / g_ii (rounded to C) is read by every
/// member from t_i, final once column i − 1 is done. Backward, Gᵀ v = u, by
/// rows of G: t_k −= g_ik v_i, v_i = t_i / g_ii, each subtraction rounded to
/// C. Then z = S v. The arithmetic and its order are those of the serial loops
/// (forward by rows, backward by columns of Gᵀ), whatever the team; the serial
/// team takes eight columns and four rows at a time, each t_i's subtractions
/// still in that order (a pass over G's rows per block, not a strided pass per
/// column).
template <class Team, class C>
FUSEKIT_HD void cholesky_solve(const Team& team, const double* G, const double* s, std::int64_t L, const C* r, C* z,
                               double* t) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  auto const as_c = [](double v) { return static_cast<double>(static_cast<C>(v)); };
  team.for_each(L, [&](std::int64_t i) { t[i] = s[i] * static_cast<double>(r[i]); });
  team.sync();
  if constexpr (is_serial_team_v<Team>) {
    // Columns eight at a time: their triangle as below, then each row under
    // it subtracts the eight in column order (one pass over G's rows, not a
    // strided pass per column); every t_i's subtractions in the same order.
    constexpr std::int64_t width = 8;
    for (std::int64_t j0 = 0; j0 < L; j0 += width) {
      std::int64_t const j1 = j0 + width < L ? j0 + width : L;
      double u[width];
      for (std::int64_t j = j0; j < j1; ++j) {
        u[j - j0] = as_c(t[j] / G[j * L + j]);
        for (std::int64_t i = j + 1; i < j1; ++i) { t[i] -= G[i * L + j] * u[j - j0]; }
      }
      for (std::int64_t i = j1; i < L; ++i) {
        const double* const g = G + i * L;
        double v = t[i];
        for (std::int64_t j = j0; j < j1; ++j) { v -= g[j] * u[j - j0]; }
        t[i] = v;
      }
    }
  } else {
    for (std::int64_t j = 0; j < L; ++j) {  // u_j = t_j / g_jj; t_i −= g_ij u_j below it
      double const u = as_c(t[j] / G[j * L + j]);
      team.for_each(L - j - 1, [&](std::int64_t a) {
        std::int64_t const i = j + 1 + a;
        t[i] -= G[i * L + j] * u;
      });
      team.sync();
    }
  }
  team.for_each(L, [&](std::int64_t i) { t[i] = as_c(t[i] / G[i * L + i]); });  // t = u
  team.sync();
  std::int64_t top = L - 1;
  if constexpr (is_serial_team_v<Team>) {
    // Rows four at a time: their triangle as below, then each t_k above it
    // takes the four subtractions in row order (one load and store of t_k).
    for (; top >= 3; top -= 4) {
      double v[4];
      for (int b = 0; b < 4; ++b) {
        std::int64_t const row = top - b;
        v[b] = t[row] / G[row * L + row];
        for (std::int64_t k = top - 3; k < row; ++k) { t[k] = as_c(t[k] - G[row * L + k] * v[b]); }
      }
      const double* const g0 = G + top * L;
      const double* const g1 = g0 - L;
      const double* const g2 = g1 - L;
      const double* const g3 = g2 - L;
      FUSEKIT_SIMD_LOOP
      for (std::int64_t k = 0; k < top - 3; ++k) {
        t[k] = as_c(as_c(as_c(as_c(t[k] - g0[k] * v[0]) - g1[k] * v[1]) - g2[k] * v[2]) - g3[k] * v[3]);
      }
    }
  }
  for (; top >= 0; --top) {  // v_i = t_i / g_ii (i = top); t_k −= g_ik v_i above it
    double const v = t[top] / G[top * L + top];
    const double* const g = G + top * L;
    team.for_each(top, [&](std::int64_t k) { t[k] = as_c(t[k] - g[k] * v); });
    team.sync();
  }
  team.for_each(L, [&](std::int64_t i) { z[i] = static_cast<C>(s[i] * as_c(t[i] / G[i * L + i])); });
  team.sync();
}

/// The Cholesky preconditioner as CG's full one (conjugate_gradient.hpp):
/// z = M r by cholesky_solve on the caller's team; `t` is this output's
/// scratch (L doubles).
struct cholesky_apply {
  static constexpr bool active = true;
  const double* G;
  const double* s;
  std::int64_t L;
  double* t;
  template <class Team, class C>
  FUSEKIT_HD void operator()(const Team& team, const C* r, C* z) const {
    cholesky_solve(team, G, s, L, r, z, t);
  }
};

/// G Gᵀ = A' + δI, and S, on the host (see the file comment).
struct cholesky_factor {
  std::vector<double> G;      ///< L × L, row-major, lower triangle
  std::vector<double> s;      ///< S's diagonal
  double shift = 0;           ///< δ
  double smallest_pivot = 0;  ///< the smallest G_jj² (A' has a unit diagonal: at most 1)
  std::int64_t L = 0;

  /// The preconditioner with `t` (L doubles) as its scratch.
  [[nodiscard]] cholesky_apply with_scratch(double* t) const { return {G.data(), s.data(), L, t}; }
};

/// The factor of A (L × L, row-major, symmetric) by cholesky_factor_body on
/// one thread.
template <class C>
cholesky_factor make_cholesky(const C* A, std::int64_t L) {
  cholesky_factor f;
  f.L = L;
  f.s.assign(static_cast<std::size_t>(L), 0.0);
  f.G.assign(static_cast<std::size_t>(L * L), 0.0);
  cholesky_outcome const out = cholesky_factor_body(serial_team{}, A, L, f.G.data(), f.s.data());
  f.shift = out.shift;
  f.smallest_pivot = out.smallest_pivot;
  return f;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
