// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The descent step: ONE definition of gradient descent (plain and Nesterov
/// with adaptive restart, each optionally preconditioned) and of the stopping
/// rules every method shares, run by the CPU backend (serial_team) and by both
/// GPU paths (block_team): the single-launch kernel and the cuBLAS path's
/// update kernel. Only the gradient differs between the callers; everything
/// from gradᵀgrad to the status is this file. Conjugate gradients, which share
/// the stopping rules, are detail/train/conjugate_gradient.hpp.
///
/// One output's iteration, given the gradient g at the point p (p = w for
/// plain) and the preconditioner's diagonal m (all ones for none):
///
///     g2 = gᵀg;  stop if g2 is non-finite, 10^12 × its first value, or stalled
///                (also: 10^6 × the best, and 10^3 × above the floor, after a
///                gradient was at the floor)
///     plain:     w ← p − lr·m∘g;  p ← w
///     nesterov:  w_new = p − lr·m∘g;  restart (j ← 0) if gᵀ(w_new − w) > 0, else j ← j + 1
///                previous ← w;  w ← w_new;  p ← w + j/(j+3)·(w − previous)
///     stop as converged if g2 < tolerance or ‖g‖_D ≤ rtol·‖b‖_D (D: the
///     diagonal of XᵀX, ‖g‖_D² = Σ g_i²/d_i), as max_iterations at the budget
///     a stop other than diverged with a non-finite w is diverged
///
/// Stalled means at the rounding floor: after a window of `stall_window`
/// iterations without 0.1% progress, ‖g‖_D ≤ c·u·(‖A'‖‖v‖ + β), where u is the
/// unit roundoff of T, v = D^½ w and A' = D^-½ A D^-½ are the problem with its
/// features scaled to unit norm, and c, ‖A'‖ and β bound the rounding error of
/// the gradient itself (for g = A w − b summed in T: c = L + 1, ‖A'‖_F, β =
/// ‖b‖_D; see `gram_terms` and `direct_terms`). Measured in D, the floor does
/// not grow with the spread of the features' units (in the plain norm it
/// would: ‖A‖‖w‖ multiplies the largest scale by the largest weight). Above
/// the floor a window without progress only starts the next window.

#include <fusekit/detail/train/descent_state.hpp>
#include <fusekit/config.hpp>
#include <fusekit/detail/team/team.hpp>
#include <fusekit/detail/base/numeric.hpp>
#include <fusekit/detail/core/random.hpp>
#include <fusekit/train_types.hpp>

#include <cmath>
#include <cstdint>

namespace fusekit {
namespace detail {
inline namespace train {

/// The unit roundoff of T.
template <class T>
FUSEKIT_HD constexpr double unit_roundoff() {
  return sizeof(T) == sizeof(float) ? 0x1p-24 : 0x1p-53;
}

/// Whether a gradient with ‖g‖_D² = gd2 is at the rounding floor of the
/// point w (see the file comment), all in the metric D; within `factor`
/// times the floor when given.
template <class T, class Team, class S>
FUSEKIT_HD bool at_rounding_floor(const Team& team, const descent_params<T>& p, const descent_state<T>& s,
                                  std::int64_t L, const T* w, T gd2, const S& scaling, double factor = 1.0) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  double const v2 = team.template sum<double>(L, [&](std::int64_t i) {
    double const v = static_cast<double>(w[i]);
    return static_cast<double>(scaling.d(i)) * v * v;
  });
  double const floor =
      factor * p.floor_multiplier * unit_roundoff<T>() * (s.terms.operator_norm * ::sqrt(v2) + s.terms.rhs_scale);
  return static_cast<double>(gd2) <= floor * floor;
}

/// The verdict of the monitor on g2 = gᵀg as a stop (or go on), with its rule in
/// s.report; `scaled2()` gives ‖g‖_D², asked only for the floor.
template <class T, class Team, class Scaled2, class S>
FUSEKIT_HD stop_verdict early_stop(const Team& team, const descent_params<T>& p, descent_state<T>& s, std::int64_t L,
                                   const T* w, T g2, const Scaled2& scaled2, const S& scaling, std::int64_t it) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  monitor_verdict const v = s.monitor.check(g2, it);
  if (v == monitor_verdict::go_on && g2 == s.monitor.best && !s.reached_floor) {
    s.reached_floor = at_rounding_floor(team, p, s, L, w, scaled2(), scaling);  // a new best: at the floor yet?
  }
  // Worse past the floor: far above the best and far above the floor too (a
  // true residual checked after the recurrence's may sit well above the
  // recurrence's best, but at the floor).
  bool const worse_past_floor =
      s.reached_floor && (v == monitor_verdict::non_finite || v == monitor_verdict::growth ||
                          (static_cast<double>(g2) > floor_growth * static_cast<double>(s.monitor.best) &&
                           !at_rounding_floor(team, p, s, L, w, scaled2(), scaling, ::sqrt(floor_growth))));
  if (worse_past_floor) {
    s.report.rule = stop_rule::rounding_floor;
    return stop_verdict::with(fit_status::stalled);
  }
  if (v == monitor_verdict::non_finite) {
    s.report.rule = stop_rule::non_finite;
    return stop_verdict::with(fit_status::diverged);
  }
  if (v == monitor_verdict::growth) {
    s.report.rule = stop_rule::growth;
    return stop_verdict::with(fit_status::diverged);
  }
  if (v == monitor_verdict::no_progress && at_rounding_floor(team, p, s, L, w, scaled2(), scaling)) {
    s.report.rule = stop_rule::rounding_floor;
    return stop_verdict::with(fit_status::stalled);
  }
  return stop_verdict::go_on();
}

/// The stop after an update, or go on: converged by a tolerance (g2 = gᵀg and
/// gd2 = ‖g‖_D² of the gradient the update used; gd2 is read only with a
/// relative tolerance), else max_iterations at the budget.
template <class T>
FUSEKIT_HD stop_verdict late_stop(const descent_params<T>& p, descent_state<T>& s, T g2, T gd2, std::int64_t done) {
  if (g2 < p.tolerance) {
    s.report.rule = stop_rule::tolerance;
    return stop_verdict::with(fit_status::converged);
  }
  if (p.relative_tolerance2 > 0 && static_cast<double>(gd2) <= p.relative_tolerance2 * s.terms.rhs_norm2) {
    s.report.rule = stop_rule::relative_tolerance;
    return stop_verdict::with(fit_status::converged);
  }
  if (done >= p.max_iterations) {
    s.report.rule = stop_rule::max_iterations;
    return stop_verdict::with(fit_status::max_iterations);
  }
  return stop_verdict::go_on();
}

/// Ends the output when `stop` stops it. Success means finite weights: the
/// last update can overflow where its gradient did not.
template <class T, class Team>
FUSEKIT_HD void finish_if_stopped(const Team& team, descent_state<T>& s, std::int64_t L, const T* w,
                                  stop_verdict stop) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  if (!stop.stops) { return; }
  s.running = false;
  s.report.status = stop.status;
  if (!stop.is(fit_status::diverged) &&
      team.template sum<int>(L, [&](std::int64_t i) { return is_finite(w[i]) ? 0 : 1; }) != 0) {
    s.report.status = fit_status::diverged;
    s.report.rule = stop_rule::non_finite;
  }
}

/// Initial weight l of row n (of length L) as `init` asks; `current` is W's value on entry.
template <class T>
FUSEKIT_HD inline T initial_weight(gd_init init, std::uint64_t seed, std::int64_t n, std::int64_t l, std::int64_t L,
                                   T current) {
  if (init == gd_init::zeros) { return T(0); }
  if (init == gd_init::uniform) { return uniform01<T>(static_cast<std::uint64_t>(n * L + l), seed); }
  return current;
}

/// Output n's start: w (row n of W, in place), previous and point.
template <class T, class Team>
FUSEKIT_HD void descent_begin(const Team& team, const descent_params<T>& p, std::int64_t n, std::int64_t L, T* w,
                              T* previous, T* point) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  team.for_each(L, [&](std::int64_t i) {
    T const v = initial_weight<T>(p.init, p.seed, n, i, L, w[i]);
    w[i] = v;
    previous[i] = v;
    point[i] = v;
  });
  team.sync();
}

/// out = A·x, A symmetric L × L, each out_i summed over j in order (A's row j
/// serves as its column j).
template <class T, class Team>
FUSEKIT_HD void gram_product(const Team& team, const T* A, std::int64_t L, const T* x, T* out) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  team.template column_sums<T>(L, L, out, [&](std::int64_t j, std::int64_t i) { return A[j * L + i] * x[j]; });
}

/// The Gram formulation's gradient: g = A·point − b.
template <class T, class Team>
FUSEKIT_HD void gram_gradient(const Team& team, const T* A, const T* b, std::int64_t L, const T* point, T* g) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  gram_product(team, A, L, point, g);
  team.for_each(L, [&](std::int64_t i) { g[i] = g[i] - b[i]; });
}

/// One iteration of one output, after the gradient at `point` is known as
/// `grad(i)`; `scaling` is the diagonal of XᵀX (the preconditioner and the
/// metric). gradᵀgrad, the stopping rules, the update of w, previous and point
/// (see the file comment). Returns whether the output goes on.
template <class T, class Team, class Grad, class S>
FUSEKIT_HD bool descent_step(const Team& team, const descent_params<T>& p, descent_state<T>& s, std::int64_t L, T* w,
                             T* previous, T* point, const Grad& grad, const S& scaling) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  T const g2 = team.template sum<T>(L, [&](std::int64_t i) {
    T const g = grad(i);
    return g * g;
  });
  auto const scaled2 = [&]() {
    return team.template sum<T>(L, [&](std::int64_t i) {
      T const g = grad(i);
      return scaling.inverse(i) * g * g;
    });
  };
  std::int64_t const it = s.report.iterations;
  s.report.grad_norm2 = static_cast<double>(g2);
  // diverged and stalled stop before the update: iterations stays `it`
  stop_verdict stop = early_stop(team, p, s, L, w, g2, scaled2, scaling, it);
  if (!stop.stops) {
    T const lr = p.learning_rate;
    if (p.method == gd_method::nesterov) {
      T const uphill = team.template sum<T>(L, [&](std::int64_t i) {
        T const g = grad(i);
        T const next = point[i] - lr * (scaling(i) * g);
        T const up = g * (next - w[i]);
        previous[i] = w[i];
        w[i] = next;
        return up;
      });
      s.momentum.advance(uphill > T(0));
      T const mu = s.momentum.template coefficient<T>();
      team.for_each(L, [&](std::int64_t i) { point[i] = w[i] + mu * (w[i] - previous[i]); });
    } else {
      team.for_each(L, [&](std::int64_t i) {
        w[i] = point[i] - lr * (scaling(i) * grad(i));
        point[i] = w[i];
      });
    }
    s.report.iterations = it + 1;
    stop = late_stop(p, s, g2, p.relative_tolerance2 > 0 ? scaled2() : T(0), it + 1);
  }
  finish_if_stopped(team, s, L, w, stop);
  team.sync();
  return s.running;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
