// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The best-iterate rule on the CPU ("never worse than W = 0", gd_options):
/// what an output keeps as it iterates (`candidates`: its start and its best
/// iterate), the residual ‖y_n − X w‖² from X itself and its rounding, and the
/// two decisions made from them: `keep_best_iterate` after the iterations and
/// `keep_refinement_if_better` after a refinement. Over several processes the
/// residuals are summed by the caller's `sum`, so every process decides alike.

#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/train_types.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// Where an output started and its best iterate, kept for keep_best_iterate.
template <class C>
struct candidates {
  std::vector<C> start, best;
};

/// ‖y_n − X w‖² over this process's rows, in C, the sum in k order.
template <class C, class T, class U>
C rows_residual2(matrix<const T> X, matrix<const U> Y, std::int64_t n, const C* w) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  C s = C(0);
  for (std::int64_t k = 0; k < K; ++k) {
    C r = static_cast<C>(Y.data_handle()[k * N + n]);
    for (std::int64_t l = 0; l < L; ++l) { r = r - static_cast<C>(X(k, l)) * w[l]; }
    s = s + r * r;
  }
  return s;
}

/// How far rounding can move ‖y_n − X w‖² as rows_residual2 computes it:
/// 2(L + 2)·u·Σ_k |r_k|·(|y_k| + Σ_l |x_kl w_l|), over this process's rows.
template <class C, class T, class U>
C residual2_rounding(matrix<const T> X, matrix<const U> Y, std::int64_t n, const C* w) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  C s = C(0);
  for (std::int64_t k = 0; k < K; ++k) {
    C const y = static_cast<C>(Y.data_handle()[k * N + n]);
    C r = y, a = y < C(0) ? -y : y;
    for (std::int64_t l = 0; l < L; ++l) {
      C const t = static_cast<C>(X(k, l)) * w[l];
      r = r - t;
      a = a + (t < C(0) ? -t : t);
    }
    s = s + (r < C(0) ? -r : r) * a;
  }
  return s * static_cast<C>(2.0 * static_cast<double>(L + 2) * unit_roundoff<C>());
}

/// 1 − 2(K + L)·u: residuals closer than this factor are equal within their rounding.
template <class C>
double residual_band(double K, std::int64_t L) {
  return 1.0 - 2.0 * (K + static_cast<double>(L)) * unit_roundoff<C>();
}

/// Never worse than the best iterate (gd_options, "W on every status"): an
/// output that did not converge ends at whichever of the best iterate seen
/// (smallest gradᵀgrad), the iterate reached, its start and W = 0 has the
/// smallest residual ‖y_n − X w‖², taken from X itself (summed over the
/// processes by `sum`); residuals within their rounding, 2(K + L)·u
/// relatively, are ties, which keep the earlier of that order (there the
/// smaller gradient is the finer measure).
template <class C, class T, class SumOverProcesses>
void keep_best_iterate(matrix<const T> X, matrix<const T> Y, matrix<C> W, std::vector<candidates<C>>& kept,
                       const fit_report& report, const SumOverProcesses& sum) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  std::vector<C> const zero(static_cast<std::size_t>(L), C(0));
  for (std::int64_t n = 0; n < N; ++n) {
    if (report.outputs[static_cast<std::size_t>(n)].status == fit_status::converged) { continue; }
    C* const w = W.data_handle() + n * L;
    const C* const choice[4] = {kept[n].best.data(), w, kept[n].start.data(), zero.data()};
    C r2[5];  // and K over every process, for the band: every process picks the same
    for (int c = 0; c < 4; ++c) { r2[c] = rows_residual2(X, Y, n, choice[c]); }
    r2[4] = static_cast<C>(X.extent(0));
    sum(r2, 5);
    double const band = residual_band<C>(static_cast<double>(r2[4]), L);
    int pick = -1;  // the smallest finite residual (finite by the bits: -ffast-math safe)
    for (int c = 0; c < 4; ++c) { pick = is_finite(r2[c]) && (pick < 0 || r2[c] < band * r2[pick]) ? c : pick; }
    if (pick >= 0 && pick != 1) { std::copy(choice[pick], choice[pick] + L, w); }
  }
}

/// The best-iterate rule's last word, after refinement (a correction is
/// accepted by its gradient in A's rounded system, which at the floor of a
/// nearly singular A can point far off): an output whose refinement changed
/// w keeps the refined w only if its residual ‖y_n − X w‖², from X, is no
/// larger than that of `before` (w before refinement) beyond the band of
/// keep_best_iterate and both residuals' rounding (residual2_rounding), where
/// the refined w wins; else it returns to `before` and its report to
/// `reported` (the report before refinement).
template <class C, class T, class SumOverProcesses>
void keep_refinement_if_better(matrix<const T> X, matrix<const T> Y, matrix<C> W, const std::vector<C>& before,
                               const std::vector<output_report>& reported, fit_report& report,
                               const SumOverProcesses& sum) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  for (std::int64_t n = 0; n < N; ++n) {
    C* const w = W.data_handle() + n * L;
    const C* const b = before.data() + n * L;
    if (std::equal(w, w + L, b)) { continue; }  // W is the same on every process: so is this test
    C r2[5] = {rows_residual2(X, Y, n, static_cast<const C*>(w)), rows_residual2(X, Y, n, b),
               residual2_rounding(X, Y, n, static_cast<const C*>(w)), residual2_rounding(X, Y, n, b),
               static_cast<C>(X.extent(0))};
    sum(r2, 5);
    // Worse by more than the residuals' own rounding (large opposite weights
    // on dependent columns make that far larger than the band): the refined
    // w loses. Within it the refined w, the more accurate one, wins.
    bool const refined_wins =
        is_finite(r2[0]) && !(r2[0] * residual_band<C>(static_cast<double>(r2[4]), L) > r2[1] + r2[2] + r2[3]);
    if (!refined_wins) {
      std::copy(b, b + L, w);
      report.outputs[static_cast<std::size_t>(n)] = reported[static_cast<std::size_t>(n)];
    }
  }
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
