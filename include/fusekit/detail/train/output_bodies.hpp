// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The bodies of the trainer's per-output kernels (detail/train/kernels.cuh),
/// written against a team (detail/team/team.hpp) so that the very code a
/// thread block runs also runs on the CPU's teams: the whole single-launch fit
/// of one output, the start and one step of one output on the cuBLAS path,
/// and CGLS's row update. A kernel is its indices (output n = blockIdx.x), its shared memory
/// and these; tests/team/threaded_team_test.cpp runs them with M real threads
/// as members, barriers and all.

#include <fusekit/config.hpp>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/detail/train/cholesky.hpp>
#include <fusekit/detail/train/conjugate_gradient.hpp>
#include <fusekit/detail/train/descent.hpp>
#include <fusekit/train_types.hpp>

#include <cstddef>
#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace train {

/// The Cholesky preconditioner as the per-output bodies take it: the factor
/// (G, L × L, and s, L: cholesky_factor_body), each output's solve scratch t
/// and, on the cuBLAS path, its M r (z); output n takes row n of t and z. A
/// null G: no Cholesky (CG runs with the diagonal scaling).
template <class T>
struct cholesky_view {
  const double* G = nullptr;
  const double* s = nullptr;
  double* t = nullptr;
  T* z = nullptr;
  [[nodiscard]] FUSEKIT_HD bool active() const { return G != nullptr; }
  [[nodiscard]] FUSEKIT_HD cholesky_apply of(std::int64_t n, std::int64_t L) const { return {G, s, L, t + n * L}; }
};

/// What the best-iterate rule keeps of each output as it iterates (the CPU
/// keeps the same in cpu_output): row n of `start` is w after its start
/// (gd_options::init), row n of `best` the iterate of the smallest gradᵀgrad
/// seen after any call of the method, `best_g2[n]` that gradᵀgrad (−1 before
/// the first). Null pointers: nothing kept.
template <class T>
struct best_iterate_view {
  T* start = nullptr;
  T* best = nullptr;
  double* best_g2 = nullptr;
  [[nodiscard]] FUSEKIT_HD bool active() const { return best != nullptr; }

  /// Output n's start, w (L values), which is also its first best.
  template <class Team>
  FUSEKIT_HD void begin(const Team& team, std::int64_t n, std::int64_t L, const T* w) const {
    if (!active()) { return; }
    team.for_each(L, [&](std::int64_t i) {
      start[n * L + i] = w[i];
      best[n * L + i] = w[i];
    });
    if (team.leader()) { best_g2[n] = -1; }
    team.sync();
  }

  /// After a call of the method that left w with gradᵀgrad g2: w becomes
  /// output n's best when g2 is smaller than the best's (or none was seen).
  /// Every member reads best_g2[n] before the leader writes it.
  template <class Team>
  FUSEKIT_HD void track(const Team& team, std::int64_t n, std::int64_t L, const T* w, double g2) const {
    if (!active()) { return; }
    double const seen = best_g2[n];
    bool const better = g2 < seen || seen < 0;
    if (better) {
      team.for_each(L, [&](std::int64_t i) { best[n * L + i] = w[i]; });
    }
    team.sync();
    if (better && team.leader()) { best_g2[n] = g2; }
  }
};

/// Shared memory of the single-launch fit for L unknowns: A, then b, w,
/// previous, point and the gradient.
template <class T>
constexpr std::size_t single_launch_shared_bytes(std::int64_t L) {
  return static_cast<std::size_t>(L * L + 5 * L) * sizeof(T);
}

/// Every iteration of output n (Gram formulation) by one team: A (L × L) and
/// row n of B and W copied into `shared` (single_launch_shared_bytes(L)), the
/// iterations there, then row n of W and reports[n] written back. With
/// `cholesky` active, CG takes z = M r into the gradient's place (free once
/// the update has read A·d).
template <class T, class Team>
FUSEKIT_HD void single_launch_body(const Team& team, std::int64_t n, const T* A, const T* B, T* W, std::int64_t L,
                                   const descent_params<T>& p, output_report* reports, T* shared,
                                   const cholesky_view<T>& cholesky = {}, const best_iterate_view<T>& kept = {}) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  T* const a = shared;
  T* const b = a + L * L;
  T* const w = b + L;
  T* const previous = w + L;
  T* const point = previous + L;
  T* const g = point + L;
  team.for_each(L * L, [&](std::int64_t i) { a[i] = A[i]; });
  team.for_each(L, [&](std::int64_t i) {
    b[i] = B[n * L + i];
    w[i] = W[n * L + i];
  });
  descent_begin(team, p, n, L, w, previous, point);  // ends with a sync: a, b and w are in place
  kept.begin(team, n, L, w);
  auto const m = make_scaling(p, static_cast<const T*>(a), L + 1);
  auto s = descent_state<T>::start(p, gram_terms(team, L, element_of<T>{a}, element_of<T>{b}, m));
  bool goes_on = true;
  while (goes_on) {
    if (p.method == gd_method::conjugate_gradient && cholesky.active()) {
      gram_product(team, a, L, point, g);
      goes_on = cg_step(team, p, s, L, w, previous, point, element_of<T>{g}, element_of<T>{b}, m, cholesky.of(n, L), g);
    } else if (p.method == gd_method::conjugate_gradient) {
      gram_product(team, a, L, point, g);  // q = A·d; d is `point`, r is `previous`
      goes_on = cg_step(team, p, s, L, w, previous, point, element_of<T>{g}, element_of<T>{b}, m);
    } else {
      gram_gradient(team, a, b, L, point, g);  // each member reads its own g[i] in the step
      goes_on = descent_step(team, p, s, L, w, previous, point, element_of<T>{g}, m);
    }
    kept.track(team, n, L, w, s.report.grad_norm2);
  }
  team.for_each(L, [&](std::int64_t i) { W[n * L + i] = w[i]; });
  if (team.leader()) { reports[n] = s.report; }
}

/// y_nᵀy_n over these K rows of Y (K × N), in double, as the direct
/// formulation's start takes it.
template <class T, class Team>
FUSEKIT_HD double target_square_sum(const Team& team, const T* Y, std::int64_t K, std::int64_t N, std::int64_t n) {
  return team.template sum<double>(K, [&](std::int64_t k) {
    double const y = static_cast<double>(Y[k * N + n]);
    return y * y;
  });
}

/// The start of output n on the cuBLAS path: its weights (gd_options::init),
/// the iterates, and states[n] from the terms of its system. A is XᵀX and B is
/// YᵀX (both formulations); Y (K × N) is read by the direct formulation only
/// (`gram` false), for ‖y_n‖, or `y2_total` holds y_nᵀy_n over every rank's
/// rows (a fit across GPUs: target_square_sum, summed over the ranks).
template <class T, class Team>
FUSEKIT_HD void begin_output_body(const Team& team, std::int64_t n, descent_state<T>* states, T* W, T* previous,
                                  T* point, const T* A, const T* B, const T* Y, std::int64_t K, std::int64_t N,
                                  std::int64_t L, bool gram, const descent_params<T>& p,
                                  const best_iterate_view<T>& kept = {}, const double* y2_total = nullptr) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  descent_begin(team, p, n, L, W + n * L, previous + n * L, point + n * L);
  kept.begin(team, n, L, W + n * L);
  auto const m = make_scaling(p, A, L + 1);
  element_of<T> const b{B + n * L};
  output_terms terms;
  if (gram) {
    terms = gram_terms(team, L, element_of<T>{A}, b, m);
  } else {
    double const y2 = y2_total != nullptr ? y2_total[n] : target_square_sum(team, Y, K, N, n);
    terms = direct_terms(team, L, b, m, y2);
  }
  if (team.leader()) { states[n] = descent_state<T>::start(p, terms); }
}

/// One step of output n on the cuBLAS path, after G holds A·point (Gram: the
/// gradient is G − B; CG takes G itself as A·d) or the gradient itself
/// (direct: `gram` false); row n of each matrix is output n. Returns whether
/// the output goes on; states[n] is written by the leader after the step's
/// last sync, when every member has read it. CG takes the Cholesky
/// preconditioner when `cholesky` is active.
template <class T, class Team>
FUSEKIT_HD bool step_output_body(const Team& team, std::int64_t n, descent_state<T>* states, T* W, T* previous,
                                 T* point, const T* G, const T* A, const T* B, bool gram, std::int64_t L,
                                 const descent_params<T>& p, const cholesky_view<T>& cholesky = {},
                                 const best_iterate_view<T>& kept = {}) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  descent_state<T> s = states[n];    // every member its own copy: the same values, the same answers
  if (!s.running) { return false; }  // uniform across the team
  const T* const gn = G + n * L;
  const T* const bn = B + n * L;
  auto const m = make_scaling(p, A, L + 1);
  bool goes_on = false;
  bool const full = cholesky.active();
  if (p.method == gd_method::conjugate_gradient && gram && full) {
    goes_on = cg_step(team, p, s, L, W + n * L, previous + n * L, point + n * L, element_of<T>{gn}, element_of<T>{bn},
                      m, cholesky.of(n, L), cholesky.z + n * L);
  } else if (p.method == gd_method::conjugate_gradient && gram) {
    goes_on =
        cg_step(team, p, s, L, W + n * L, previous + n * L, point + n * L, element_of<T>{gn}, element_of<T>{bn}, m);
  } else if (p.method == gd_method::conjugate_gradient && full) {  // CGLS: G holds r = Xᵀρ (cgls_rows_body ran first)
    goes_on = cg_direction(team, p, s, L, W + n * L, gn, point + n * L, m, cholesky.of(n, L), cholesky.z + n * L);
  } else if (p.method == gd_method::conjugate_gradient) {
    goes_on = cg_direction(team, p, s, L, W + n * L, gn, point + n * L, m);
  } else {
    goes_on = descent_step(
        team, p, s, L, W + n * L, previous + n * L, point + n * L,
        [&](std::int64_t i) { return gram ? gn[i] - bn[i] : gn[i]; }, m);
  }
  kept.track(team, n, L, W + n * L, s.report.grad_norm2);  // ends with a sync before its leader's write
  if (team.leader()) { states[n] = s; }
  return goes_on;
}

/// CGLS's update of output n's rows residual, after Q holds X·Pᵀ; it runs
/// before the GEMM that makes Xᵀρ and the step (detail/train/conjugate_gradient.hpp).
/// Q and R (ρ) are stored output by output (N × K: row n is output n's K
/// values), so the team reads and writes them in consecutive addresses, as the
/// CPU backend keeps them; Y is the user's K × N (read on a start only).
/// `q2_total` (a fit across GPUs): each output's qᵀq over every rank's rows
/// (cgls_square_sum_body, summed over the ranks); null: this team sums it.
template <class T, class Team>
FUSEKIT_HD void cgls_rows_body(const Team& team, std::int64_t n, descent_state<T>* states, T* W, const T* point,
                               const T* Q, T* R, const T* Y, std::int64_t K, std::int64_t N, std::int64_t L,
                               const T* q2_total = nullptr) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  descent_state<T> s = states[n];
  if (!s.running) { return; }  // uniform across the team
  auto const rows = [&](const auto& sum) {
    cgls_rows(
        team, s, K, L, W + n * L, point + n * L, [&](std::int64_t k) { return Q[n * K + k]; },
        [&](std::int64_t k) { return Y[k * N + n]; }, [&](std::int64_t k) -> T& { return R[n * K + k]; }, sum);
  };
  if (q2_total != nullptr) {
    rows(summed_before<T>{q2_total + n});
  } else {
    rows(no_processes{});
  }
  if (team.leader()) { states[n] = s; }  // after cgls_rows' last sync: every member has read states[n]
}

/// Output n's qᵀq over this rank's K rows of Q (N × K, as cgls_rows_body
/// reads it) into out[n], for the sum over the ranks that cgls_rows_body
/// then takes; 0 where the output has stopped or not started (unread).
template <class T, class Team>
FUSEKIT_HD void cgls_square_sum_body(const Team& team, std::int64_t n, const descent_state<T>* states, const T* Q,
                                     std::int64_t K, T* out) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  descent_state<T> const s = states[n];
  T const q2 = s.running && s.started ? cgls_square_sum<T>(team, K, [&](std::int64_t k) { return Q[n * K + k]; })
                                      : T(0);  // uniform across the team
  if (team.leader()) { out[n] = q2; }
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
