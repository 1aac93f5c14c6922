// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The best-iterate rule ("never worse than W = 0", gd_options), shared by
/// every backend: the residual ‖y_n − X w‖² of a candidate w, taken from X
/// itself, and its rounding, as one team body over a slice of rows (the CPU
/// runs it on a serial_team over all its rows, the GPU in a block per output,
/// candidate and slice: detail/train/cuda_best_iterate.cuh); and the two
/// decisions made from them, which pick among the candidates
/// (`best_candidate`) and keep a refinement (`refinement_wins`).

#include <fusekit/config.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/detail/train/descent.hpp>

#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace train {

/// y_kn − Σ_l x_kl w_l in C (l in order; w null: W = 0), and, in `abs`,
/// |y_kn| + Σ_l |x_kl w_l|.
template <class C, class T, class U>
FUSEKIT_HD FUSEKIT_FORCEINLINE C row_residual(const T* X, const U* Y, std::int64_t k, std::int64_t L, std::int64_t N,
                                              std::int64_t n, const C* w, C& abs) {
  C const y = static_cast<C>(Y[k * N + n]);
  C r = y;
  abs = y < C(0) ? -y : y;
  for (std::int64_t l = 0; l < L && w != nullptr; ++l) {
    C const t = static_cast<C>(X[k * L + l]) * w[l];
    r = r - t;
    abs = abs + (t < C(0) ? -t : t);
  }
  return r;
}

/// ‖y_n − X w‖² over `rows` rows of X (row-major, L columns) and Y (N
/// columns), in C, summed by the team in its order (serial_team: k order
/// from C(0)); w null: W = 0.
template <class C, class Team, class T, class U>
FUSEKIT_HD C residual2_sum(const Team& team, const T* X, const U* Y, std::int64_t rows, std::int64_t L, std::int64_t N,
                           std::int64_t n, const C* w) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  return team.template sum<C>(rows, [&](std::int64_t k) {
    C abs = C(0);
    C const r = row_residual(X, Y, k, L, N, n, w, abs);
    return r * r;
  });
}

/// Σ_k |r_k|·(|y_k| + Σ_l |x_kl w_l|) over the same rows, by the team: times
/// `residual2_rounding_factor`, how far rounding can move residual2_sum.
template <class C, class Team, class T, class U>
FUSEKIT_HD C residual2_rounding_sum(const Team& team, const T* X, const U* Y, std::int64_t rows, std::int64_t L,
                                    std::int64_t N, std::int64_t n, const C* w) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  return team.template sum<C>(rows, [&](std::int64_t k) {
    C abs = C(0);
    C const r = row_residual(X, Y, k, L, N, n, w, abs);
    return (r < C(0) ? -r : r) * abs;
  });
}

/// Up to four candidate W's (N × L; null: W = 0) whose residuals a backend
/// takes, in the order of best_candidate.
template <class T>
struct residual_candidates {
  const T* w[4] = {nullptr, nullptr, nullptr, nullptr};
  int count = 0;
};

/// The most slices of rows the GPU's residual terms take (residual_terms_kernel).
inline constexpr std::int64_t residual_most_slices = 64;

/// Rows a block of the residual terms takes: at least 4096 a slice, at most
/// residual_most_slices slices.
inline std::int64_t residual_slice_rows(std::int64_t K) {
  std::int64_t const least = 4096;
  std::int64_t const even = (K + residual_most_slices - 1) / residual_most_slices;
  return even > least ? even : least;
}

/// Block b of the GPU's residual terms (residual_terms_kernel): slice
/// b % slices (`slice_rows` rows from slice·slice_rows) of output n's
/// candidate c, (n·count + c)·slices + slice = b: out[2b] = Σ r² and
/// out[2b + 1] = Σ |r|(|y| + Σ|x w|) over the slice's rows, in T, by the team.
template <class T, class Team>
FUSEKIT_HD void residual_terms_block(const Team& team, std::int64_t b, const T* X, const T* Y, std::int64_t K,
                                     std::int64_t L, std::int64_t N, const residual_candidates<T>& c,
                                     std::int64_t slice_rows, std::int64_t slices, T* out) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  std::int64_t const slice = b % slices, pair = b / slices;
  std::int64_t const cand = pair % c.count, n = pair / c.count;
  std::int64_t const first = slice * slice_rows;
  std::int64_t const rows = K - first < slice_rows ? K - first : slice_rows;
  const T* const base = c.w[cand];
  const T* const w = base != nullptr ? base + n * L : nullptr;
  T const r2 = residual2_sum(team, X + first * L, Y + first * N, rows, L, N, n, w);
  T const rounding = residual2_rounding_sum(team, X + first * L, Y + first * N, rows, L, N, n, w);
  if (team.leader()) {
    out[2 * b] = r2;
    out[2 * b + 1] = rounding;
  }
}

/// 2(L + 2)·u of C.
template <class C>
FUSEKIT_HD double residual2_rounding_factor(std::int64_t L) {
  return 2.0 * static_cast<double>(L + 2) * unit_roundoff<C>();
}

/// 1 − 2(K + L)·u: residuals closer than this factor are equal within their rounding.
template <class C>
FUSEKIT_HD double residual_band(double K, std::int64_t L) {
  return 1.0 - 2.0 * (K + static_cast<double>(L)) * unit_roundoff<C>();
}

/// Which of the candidates an output that did not converge ends at: r2[c] is
/// the residual of candidate c, in the order best iterate seen, iterate
/// reached, start, W = 0; the smallest finite one (finite by the bits:
/// -ffast-math safe), where residuals within the band of K rows (over every
/// process) are ties, which keep the earlier (there the smaller gradient is
/// the finer measure). −1: none finite.
template <class C>
FUSEKIT_HD int best_candidate(const C* r2, double K, std::int64_t L) {
  double const band = residual_band<C>(K, L);
  int pick = -1;
  for (int c = 0; c < 4; ++c) { pick = is_finite(r2[c]) && (pick < 0 || r2[c] < band * r2[pick]) ? c : pick; }
  return pick;
}

/// Whether a refined w stays (keep_refinement_if_better): its residual is
/// finite and not larger than that of w before refinement beyond the band
/// and both residuals' rounding (large opposite weights on dependent columns
/// make that far larger than the band); within it the refined w, the more
/// accurate one, wins.
template <class C>
FUSEKIT_HD bool refinement_wins(C refined2, C before2, C refined_rounding, C before_rounding, double K,
                                std::int64_t L) {
  return is_finite(refined2) && !(refined2 * residual_band<C>(K, L) > before2 + refined_rounding + before_rounding);
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
