// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The descent step: ONE definition of gradient descent (plain and Nesterov
/// with adaptive restart, each optionally preconditioned) and of the stopping
/// rules every method shares, run by the CPU backend (serial_team) and by both
/// GPU paths (block_team): the single-launch kernel and the cuBLAS path's
/// update kernel. Only the gradient differs between the callers; everything
/// from gradᵀgrad to the status is this file. Conjugate gradients, which share
/// the stopping rules, are detail/conjugate_gradient.hpp.
///
/// One output's iteration, given the gradient g at the point p (p = w for
/// plain) and the preconditioner's diagonal m (all ones for none):
///
///     g2 = gᵀg;  stop if g2 is non-finite, 10^12 × its first value, or stalled
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

#include <fusekit/config.hpp>
#include <fusekit/detail/numeric.hpp>
#include <fusekit/detail/random.hpp>
#include <fusekit/train_types.hpp>

#include <cmath>
#include <cstdint>

namespace fusekit {
namespace detail {

/// Divergence: gradᵀgrad non-finite, or above `divergence_growth` times its
/// value at the start. With lr = c/λmax, c > 2, the component along the top
/// eigenvector grows by (c − 1)² per iteration, so this triggers within
/// log((c−1)²)(growth / share of that component) iterations (about 40 for
/// c = 3 and a start with a 10^-6 share).
inline constexpr double divergence_growth = 1e12;

/// Progress: the best gradᵀgrad of a window of `stall_window` iterations is at
/// least `stall_progress` (relatively) below the best before it.
inline constexpr double stall_progress = 1e-3;

/// What the monitor sees after one gradient.
enum class monitor_verdict : int { go_on, non_finite, growth, no_progress };

/// Watches gradᵀgrad, iteration by iteration, for divergence and for windows
/// without progress (a stall only if the step finds g at the rounding floor).
template <class T>
struct gd_monitor {
  std::int64_t stall_window;
  T first = T(-1);
  T best = T(0);
  T best_at_window_start = T(0);
  std::int64_t window_start = 0;

  /// After the gradient of iteration `it` (0-based). A window without progress
  /// starts the next window whatever the caller decides.
  FUSEKIT_HD monitor_verdict check(T g2, std::int64_t it) {
    if (!is_finite(g2)) { return monitor_verdict::non_finite; }  // NaN or inf, by the bits (-ffast-math safe)
    if (first < T(0)) {
      first = g2;
      best = g2;
      best_at_window_start = g2;
      window_start = it;
      return monitor_verdict::go_on;
    }
    if (static_cast<double>(g2) > divergence_growth * static_cast<double>(first)) { return monitor_verdict::growth; }
    if (g2 < best) { best = g2; }
    if (it - window_start >= stall_window) {
      bool const progress =
          static_cast<double>(best) < (1.0 - stall_progress) * static_cast<double>(best_at_window_start);
      best_at_window_start = best;
      window_start = it;
      if (!progress) { return monitor_verdict::no_progress; }
    }
    return monitor_verdict::go_on;
  }
};

/// Nesterov's momentum with adaptive restart (O'Donoghue and Candès, 2015): the
/// coefficient j/(j+3) grows with the steps since the last restart, j, and
/// drops to 0 when a step went uphill.
struct nesterov_state {
  std::int64_t j = 0;
  template <class T>
  FUSEKIT_HD T coefficient() const {
    return static_cast<T>(j) / static_cast<T>(j + 3);
  }
  FUSEKIT_HD void advance(bool uphill) { j = uphill ? 0 : j + 1; }
};

/// What the step needs of gd_options, by value (kernels take it as an argument).
template <class T>
struct descent_params {
  T learning_rate;  ///< given, or automatic (checked on the host first); unused by CG
  T tolerance;
  std::int64_t max_iterations;
  std::int64_t stall_window;
  std::uint64_t seed;
  gd_init init;
  gd_method method;
  bool jacobi;                 ///< the preconditioner is diag(A)⁻¹
  double relative_tolerance2;  ///< rtol², 0 when off
  double floor_multiplier;     ///< c of the floor (see the file comment)
};

template <class T>
descent_params<T> make_descent_params(const gd_options& o, double learning_rate, double floor_multiplier) {
  return {static_cast<T>(learning_rate),
          static_cast<T>(o.tolerance),
          o.max_iterations,
          o.stall_window,
          o.seed,
          o.init,
          o.method,
          o.preconditioner == gd_preconditioner::jacobi,
          o.relative_tolerance * o.relative_tolerance,
          floor_multiplier};
}

/// The Jacobi preconditioner's entry for a diagonal entry of A = XᵀX: 1/a, and
/// 0 for a column of zeros (a = 0: that weight never moves, its gradient is 0).
template <class T>
FUSEKIT_HD FUSEKIT_FORCEINLINE T jacobi_entry(T diagonal) {
  return diagonal > T(0) ? T(1) / diagonal : T(0);
}

/// The diagonal d of XᵀX, read from A (stride L + 1) or from a vector (stride
/// 1). It is the Jacobi preconditioner when `active` (m_i = 1/d_i, else 1), and
/// always the metric of the relative tolerance and of the rounding floor:
/// ‖g‖_D² = Σ g_i²/d_i, the gradient of the features scaled to unit norm, so
/// that neither depends on the features' units.
template <class T>
struct diagonal_scaling {
  const T* diagonal;
  std::int64_t stride;
  bool active;
  FUSEKIT_HD FUSEKIT_FORCEINLINE T d(std::int64_t i) const { return diagonal[i * stride]; }
  /// 1/d_i, 0 for a column of zeros.
  FUSEKIT_HD FUSEKIT_FORCEINLINE T inverse(std::int64_t i) const { return jacobi_entry(d(i)); }
  /// The preconditioner's m_i.
  FUSEKIT_HD FUSEKIT_FORCEINLINE T operator()(std::int64_t i) const { return active ? inverse(i) : T(1); }
};

template <class T>
FUSEKIT_HD diagonal_scaling<T> make_scaling(const descent_params<T>& p, const T* diagonal, std::int64_t stride) {
  return {diagonal, stride, p.jacobi};
}

/// An output's terms of the stopping rules, in the metric D (diagonal_scaling):
/// ‖b‖_D² (relative tolerance), and ‖A'‖ and β of the rounding floor (see the
/// file comment), of the features scaled to unit norm.
struct output_terms {
  double rhs_norm2 = 0;
  double operator_norm = 0;
  double rhs_scale = 0;
};

/// One output's descent between steps. On the GPU every member of the block
/// holds the same copy (every member computes the same values).
template <class T>
struct descent_state {
  gd_monitor<T> monitor;
  nesterov_state momentum;
  output_report report;  ///< iterations, the last gradᵀgrad, the status and the rule
  bool running;
  output_terms terms;  ///< of the stopping rules
  T gamma;             ///< CG: rᵀ(m∘r) of the current residual
  bool started;        ///< CG: the first residual is known

  FUSEKIT_HD static descent_state start(const descent_params<T>& p, output_terms terms = {}) {
    return {gd_monitor<T>{p.stall_window},
            nesterov_state{},
            output_report{0, 0.0, fit_status::max_iterations, stop_rule::none},
            true,
            terms,
            T(0),
            false};
  }
};

/// The terms of the Gram formulation from A (L × L) and b_n (element fns):
/// ‖b‖_D², ‖D^-½ A D^-½‖_F and β = ‖b‖_D, in double.
template <class Team, class A, class B, class S>
FUSEKIT_HD output_terms gram_terms(const Team& team, std::int64_t L, const A& a, const B& b, const S& scaling) {
  output_terms t;
  t.rhs_norm2 = team.template sum<double>(L, [&](std::int64_t i) {
    double const v = static_cast<double>(b(i));
    return static_cast<double>(scaling.inverse(i)) * v * v;
  });
  t.rhs_scale = ::sqrt(t.rhs_norm2);
  t.operator_norm = ::sqrt(team.template sum<double>(L * L, [&](std::int64_t e) {
    double const v = static_cast<double>(a(e));
    return v * v * static_cast<double>(scaling.inverse(e / L)) * static_cast<double>(scaling.inverse(e % L));
  }));
  return t;
}

/// The direct formulation's terms: ‖b‖_D² from b_n, ‖D^-½ XᵀX D^-½‖ bounded by
/// ‖X D^-½‖_F² = the number of non-zero columns, and β = ‖X D^-½‖_F ‖y_n‖
/// (y2 = ‖y_n‖²).
template <class Team, class B, class S>
FUSEKIT_HD output_terms direct_terms(const Team& team, std::int64_t L, const B& b, const S& scaling, double y2) {
  output_terms t;
  t.rhs_norm2 = team.template sum<double>(L, [&](std::int64_t i) {
    double const v = static_cast<double>(b(i));
    return static_cast<double>(scaling.inverse(i)) * v * v;
  });
  t.operator_norm = team.template sum<double>(L, [&](std::int64_t i) { return scaling.d(i) > 0 ? 1.0 : 0.0; });
  t.rhs_scale = ::sqrt(t.operator_norm) * ::sqrt(y2);
  return t;
}

/// The unit roundoff of T.
template <class T>
FUSEKIT_HD constexpr double unit_roundoff() {
  return sizeof(T) == sizeof(float) ? 0x1p-24 : 0x1p-53;
}

/// Whether a gradient with ‖g‖_D² = gd2 is at the rounding floor of the
/// point w (see the file comment), all in the metric D.
template <class T, class Team, class S>
FUSEKIT_HD bool at_rounding_floor(const Team& team, const descent_params<T>& p, const descent_state<T>& s,
                                  std::int64_t L, const T* w, T gd2, const S& scaling) {
  double const v2 = team.template sum<double>(L, [&](std::int64_t i) {
    double const v = static_cast<double>(w[i]);
    return static_cast<double>(scaling.d(i)) * v * v;
  });
  double const floor =
      p.floor_multiplier * unit_roundoff<T>() * (s.terms.operator_norm * ::sqrt(v2) + s.terms.rhs_scale);
  return static_cast<double>(gd2) <= floor * floor;
}

/// The verdict of the monitor on g2 = gᵀg as a stop (or -1), with its rule in
/// s.report; `scaled2()` gives ‖g‖_D², asked only for the floor.
template <class T, class Team, class Scaled2, class S>
FUSEKIT_HD int early_stop(const Team& team, const descent_params<T>& p, descent_state<T>& s, std::int64_t L, const T* w,
                          T g2, const Scaled2& scaled2, const S& scaling, std::int64_t it) {
  monitor_verdict const v = s.monitor.check(g2, it);
  if (v == monitor_verdict::non_finite) {
    s.report.rule = stop_rule::non_finite;
    return int(fit_status::diverged);
  }
  if (v == monitor_verdict::growth) {
    s.report.rule = stop_rule::growth;
    return int(fit_status::diverged);
  }
  if (v == monitor_verdict::no_progress && at_rounding_floor(team, p, s, L, w, scaled2(), scaling)) {
    s.report.rule = stop_rule::rounding_floor;
    return int(fit_status::stalled);
  }
  return -1;
}

/// The stop after an update, or -1: converged by a tolerance (g2 = gᵀg and
/// gd2 = ‖g‖_D² of the gradient the update used; gd2 is read only with a
/// relative tolerance), else max_iterations at the budget.
template <class T>
FUSEKIT_HD int late_stop(const descent_params<T>& p, descent_state<T>& s, T g2, T gd2, std::int64_t done) {
  if (g2 < p.tolerance) {
    s.report.rule = stop_rule::tolerance;
    return int(fit_status::converged);
  }
  if (p.relative_tolerance2 > 0 && static_cast<double>(gd2) <= p.relative_tolerance2 * s.terms.rhs_norm2) {
    s.report.rule = stop_rule::relative_tolerance;
    return int(fit_status::converged);
  }
  if (done >= p.max_iterations) {
    s.report.rule = stop_rule::max_iterations;
    return int(fit_status::max_iterations);
  }
  return -1;
}

/// Ends the output with `stop` (when ≥ 0). Success means finite weights: the
/// last update can overflow where its gradient did not.
template <class T, class Team>
FUSEKIT_HD void finish_if_stopped(const Team& team, descent_state<T>& s, std::int64_t L, const T* w, int stop) {
  if (stop < 0) { return; }
  s.running = false;
  s.report.status = static_cast<fit_status>(stop);
  if (stop != int(fit_status::diverged) &&
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
  team.template column_sums<T>(L, L, out, [&](std::int64_t j, std::int64_t i) { return A[j * L + i] * x[j]; });
}

/// The Gram formulation's gradient: g = A·point − b.
template <class T, class Team>
FUSEKIT_HD void gram_gradient(const Team& team, const T* A, const T* b, std::int64_t L, const T* point, T* g) {
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
  int stop = early_stop(team, p, s, L, w, g2, scaled2, scaling, it);
  if (stop < 0) {
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

}  // namespace detail
}  // namespace fusekit
