// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Conjugate gradients on the normal equations XᵀX w = Xᵀy: ONE definition of
/// the method's direction and stopping, run by the CPU backend (serial_team)
/// and by both GPU paths (block_team), with the stopping rules of
/// detail/train/descent.hpp. Two forms share it, which differ only in how the
/// residual r = b − A w (the negated gradient) is kept:
///
/// * Gram (`cg_step`): A = XᵀX is formed; the caller gives q = A·d.
///       first call (d = w₀):  r = b − q
///       then:                 α = γ / dᵀq;  w ← w + α d;  r ← r − α q
/// * CGLS (the direct formulation, `cgls_rows`): XᵀX is never formed; the
///   residual of the rows, ρ = y − X w, is kept, and the caller gives q = X d
///   and then r = Xᵀρ:
///       first call (d = w):   ρ = y − q
///       then:                 α = γ / qᵀq;  w ← w + α d;  ρ ← ρ − α q
///       both:                 r = Xᵀρ
///   Across processes (fusekit::mpi), each holds its rows of ρ and q; qᵀq and
///   r are summed over them, and the rest is the same on every process.
///
/// Then, in both (`cg_direction`), with m the preconditioner's diagonal:
///
///     stop as diverged, stalled, converged or max_iterations (descent.hpp's rules, g = −r)
///     z = m∘r (or z = M r, a full M);  γ' = rᵀz;  β = γ'/γ (0 on the first call);  d ← z + β d;  γ ← γ'
///
/// The first call updates nothing and counts no iteration: `iterations` is the
/// number of updates of w, at most `max_iterations`. In exact arithmetic CG
/// ends within L iterations (within the number of distinct eigenvalues of
/// M^½ A M^½). In floating point the recurrence residual r drifts from
/// b − A w, so `converged` is confirmed on b − A w itself: when the recurrence
/// meets a tolerance, the next call computes the true residual at d = w (as
/// the first call does, counting no iteration) and stops only if it meets the
/// tolerance too; else CG restarts from it.

#include <fusekit/config.hpp>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/detail/train/descent.hpp>

#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace train {

/// A preconditioner that is not a diagonal: `full(team, r, z)` writes z = M r
/// on the caller's team and ends with a sync. This one is none (the diagonal
/// `scaling` is the preconditioner); the Cholesky preconditioner is another
/// (cholesky_apply, detail/train/cholesky.hpp).
struct diagonal_only {
  static constexpr bool active = false;
  template <class Team, class T>
  FUSEKIT_HD void operator()(const Team&, const T*, T*) const {}
};

/// The stopping rules on the residual r, then the next direction d (see the
/// file comment). Returns whether the output goes on. With a `full`
/// preconditioner, z (L values) receives M r and d ← z + β d.
template <class T, class Team, class S, class Full = diagonal_only>
FUSEKIT_HD bool cg_direction(const Team& team, const descent_params<T>& p, descent_state<T>& s, std::int64_t L,
                             const T* w, const T* r, T* d, const S& scaling, const Full& full = {}, T* z = nullptr) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  bool const true_residual = !s.started;  // r = b − A w itself, not the recurrence's
  T const r2 = team.template sum<T>(L, [&](std::int64_t i) { return r[i] * r[i]; });
  auto const scaled2 = [&]() {
    return team.template sum<T>(L, [&](std::int64_t i) { return scaling.inverse(i) * r[i] * r[i]; });
  };
  T gamma = T(0);  // rᵀ M r
  if constexpr (Full::active) {
    full(team, r, z);  // ends with a sync
    gamma = team.template sum<T>(L, [&](std::int64_t i) { return r[i] * z[i]; });
  } else {
    gamma = !p.jacobi ? r2 : scaled2();
  }
  auto const metric2 = [&]() { return p.jacobi && !Full::active ? gamma : scaled2(); };
  std::int64_t const it = s.report.iterations;
  s.report.grad_norm2 = static_cast<double>(r2);
  stop_verdict stop = early_stop(team, p, s, L, w, r2, metric2, scaling, it);
  if (!stop.stops) { stop = late_stop(p, s, r2, p.relative_tolerance2 > 0 ? metric2() : T(0), it); }
  if (stop.is(fit_status::converged) && !true_residual) {
    // The recurrence says converged: confirm it on b − A w, which the next
    // call computes with d = w (and, if it is not met, restarts CG from it).
    s.report.rule = stop_rule::none;
    s.started = false;
    team.for_each(L, [&](std::int64_t i) { d[i] = w[i]; });
    team.sync();
    return true;
  }
  if (!stop.stops) {
    T const beta = s.started ? gamma / s.gamma : T(0);
    if constexpr (Full::active) {
      team.for_each(L, [&](std::int64_t i) { d[i] = z[i] + beta * d[i]; });
    } else {
      team.for_each(L, [&](std::int64_t i) { d[i] = scaling(i) * r[i] + beta * d[i]; });
    }
  }
  s.gamma = gamma;
  s.started = true;
  finish_if_stopped(team, s, L, w, stop);
  team.sync();
  return s.running;
}

/// One call of Gram CG, after the caller has written q = A·d as `applied(i)`
/// (d = `d`, which holds w on the first call); `rhs(i)` is b_i. Returns
/// whether the output goes on. `full` and z as cg_direction takes them.
template <class T, class Team, class Applied, class Rhs, class S, class Full = diagonal_only>
FUSEKIT_HD bool cg_step(const Team& team, const descent_params<T>& p, descent_state<T>& s, std::int64_t L, T* w, T* r,
                        T* d, const Applied& applied, const Rhs& rhs, const S& scaling, const Full& full = {},
                        T* z = nullptr) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  if (!s.started) {
    team.for_each(L, [&](std::int64_t i) { r[i] = rhs(i) - applied(i); });
  } else {
    T const curvature = team.template sum<T>(L, [&](std::int64_t i) { return d[i] * applied(i); });
    T const alpha = s.gamma / curvature;
    team.for_each(L, [&](std::int64_t i) {
      w[i] = w[i] + alpha * d[i];
      r[i] = r[i] - alpha * applied(i);
    });
    s.report.iterations += 1;
  }
  team.sync();
  return cg_direction(team, p, s, L, w, r, d, scaling, full, z);
}

/// The sum-over-processes hook for one process: `sum(values, count)` turns
/// each of `count` sums over this process's rows into the sum over every
/// process's rows, in place; one process holds every row, so there is nothing
/// to do. (fusekit::mpi passes an ordered allreduce.)
struct no_processes {
  template <class V>
  FUSEKIT_HD void operator()(V*, std::int64_t) const {}
};

/// A sum over every process's rows taken before the body runs: a fit across
/// GPUs adds each output's qᵀq (cgls_square_sum) over the ranks between two
/// launches, and the body reads the total from `total`.
template <class T>
struct summed_before {
  const T* total;
};

template <class Sum>
inline constexpr bool is_summed_before_v = false;
template <class T>
inline constexpr bool is_summed_before_v<summed_before<T>> = true;

/// qᵀq over these K rows, as cgls_rows sums it (ends with the team's sync).
template <class T, class Team, class Q>
FUSEKIT_HD T cgls_square_sum(const Team& team, std::int64_t K, const Q& q) {
  return team.template sum<T>(K, [&](std::int64_t k) {
    T const v = q(k);
    return v * v;
  });
}

/// CGLS's update of the rows' residual ρ, after the caller has written
/// q = X·d as `q(k)` (k < K; d holds w on the first call); `y(k)` is y_k and
/// `rho(k)` a reference to ρ_k. First call: ρ = y − q. Then α = γ/qᵀq,
/// w ← w + α d, ρ ← ρ − α q. The caller then writes r = Xᵀρ and calls
/// `cg_direction`. `sum` (see no_processes) turns a sum over these K rows into
/// the sum over every process's rows, or holds that sum (summed_before).
template <class T, class Team, class Q, class Y, class Rho, class Sum = no_processes>
FUSEKIT_HD void cgls_rows(const Team& team, descent_state<T>& s, std::int64_t K, std::int64_t L, T* w, const T* d,
                          const Q& q, const Y& y, const Rho& rho, const Sum& sum = Sum{}) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  if (!s.started) {
    team.for_each(K, [&](std::int64_t k) { rho(k) = y(k) - q(k); });
  } else {
    T q2 = T(0);
    if constexpr (is_summed_before_v<Sum>) {
      q2 = *sum.total;
    } else {
      q2 = cgls_square_sum<T>(team, K, q);
      sum(&q2, 1);
    }
    T const alpha = s.gamma / q2;
    team.for_each(L, [&](std::int64_t l) { w[l] = w[l] + alpha * d[l]; });
    team.for_each(K, [&](std::int64_t k) { rho(k) = rho(k) - alpha * q(k); });
    s.report.iterations += 1;
  }
  team.sync();
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
