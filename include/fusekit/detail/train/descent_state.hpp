// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What the descent step (detail/train/descent.hpp) keeps and reads: the
/// monitor of gradᵀgrad for divergence and stalls, Nesterov's momentum, the
/// step's parameters from gd_options, the Jacobi scaling, an output's terms of
/// the stopping rules (from A or from X), and one output's state between steps.

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

/// Divergence: gradᵀgrad non-finite, or above `divergence_growth` times its
/// value at the start. With lr = c/λmax, c > 2, the component along the top
/// eigenvector grows by (c − 1)² per iteration, so this triggers within
/// log((c−1)²)(growth / share of that component) iterations (about 40 for
/// c = 3 and a start with a 10^-6 share).
inline constexpr double divergence_growth = 1e12;

/// Progress: the best gradᵀgrad of a window of `stall_window` iterations is at
/// least `stall_progress` (relatively) below the best before it.
inline constexpr double stall_progress = 1e-3;

/// Past the rounding floor: once an output's gradient has been at its
/// rounding floor, gradᵀgrad above `floor_growth` times the best seen, and
/// ‖g‖_D above √floor_growth times the floor, means the iterate is getting
/// worse, not better (CGLS's recurrence drifts from the true residual there
/// and w runs off): the output stops as stalled.
inline constexpr double floor_growth = 1e6;

/// What the monitor sees after one gradient.
enum class monitor_verdict : int { go_on, non_finite, growth, no_progress };

/// What the stopping rules say after a gradient: go on, or stop with `status`.
struct stop_verdict {
  bool stops = false;
  fit_status status = fit_status::max_iterations;

  /// The output goes on.
  FUSEKIT_HD static constexpr stop_verdict go_on() { return {}; }
  /// The output stops with status `s`.
  FUSEKIT_HD static constexpr stop_verdict with(fit_status s) { return {true, s}; }
  /// Whether it stops with status `s`.
  [[nodiscard]] FUSEKIT_HD constexpr bool is(fit_status s) const { return stops && status == s; }
};

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
  bool jacobi;                 ///< the preconditioner is diag(A)⁻¹ (false where a full one runs)
  double relative_tolerance2;  ///< rtol², 0 when off
  double floor_multiplier;     ///< c of the floor (see the file comment)
};

/// The absolute rule's tolerance on gradᵀgrad: the one set, else
/// gd_options::default_tolerance without a relative tolerance and 0 (off) beside one.
inline double absolute_tolerance(const gd_options& o) {
  if (o.tolerance) { return *o.tolerance; }
  return o.relative_tolerance > 0 ? 0.0 : gd_options::default_tolerance;
}

template <class T>
descent_params<T> make_descent_params(const gd_options& o, double learning_rate, double floor_multiplier) {
  return {
      static_cast<T>(learning_rate),
      static_cast<T>(absolute_tolerance(o)),
      o.max_iterations,
      o.stall_window,
      o.seed,
      o.init,
      o.method,
      o.preconditioner != gd_preconditioner::none,  // cholesky: Jacobi, unless its factor runs (the caller clears it)
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
  bool reached_floor;  ///< a gradient has been at the rounding floor

  FUSEKIT_HD static descent_state start(const descent_params<T>& p, output_terms terms = {}) {
    return {gd_monitor<T>{p.stall_window},
            nesterov_state{},
            output_report{0, 0.0, fit_status::max_iterations, stop_rule::none},
            true,
            terms,
            T(0),
            false,
            false};
  }
};

/// ‖b‖_D² of b_n (an element fn), in double.
template <class Team, class B, class S>
FUSEKIT_HD double scaled_rhs_norm2(const Team& team, std::int64_t L, const B& b, const S& scaling) {
  return team.template sum<double>(L, [&](std::int64_t i) {
    double const v = static_cast<double>(b(i));
    return static_cast<double>(scaling.inverse(i)) * v * v;
  });
}

/// ‖D^-½ A D^-½‖_F of A (L × L, an element fn), in double: the same for
/// every output (the CPU takes it once per fit, gram_terms with it).
template <class Team, class A, class S>
FUSEKIT_HD double gram_operator_norm(const Team& team, std::int64_t L, const A& a, const S& scaling) {
  return ::sqrt(team.template sum<double>(L * L, [&](std::int64_t e) {
    double const v = static_cast<double>(a(e));
    return v * v * static_cast<double>(scaling.inverse(e / L)) * static_cast<double>(scaling.inverse(e % L));
  }));
}

/// The terms of the Gram formulation from b_n (an element fn) and A's
/// gram_operator_norm: ‖b‖_D², ‖D^-½ A D^-½‖_F and β = ‖b‖_D, in double.
template <class Team, class B, class S>
FUSEKIT_HD output_terms gram_terms_with(const Team& team, std::int64_t L, double operator_norm, const B& b,
                                        const S& scaling) {
  output_terms t;
  t.rhs_norm2 = scaled_rhs_norm2(team, L, b, scaling);
  t.rhs_scale = ::sqrt(t.rhs_norm2);
  t.operator_norm = operator_norm;
  return t;
}

/// The same from A (L × L) and b_n (element fns).
template <class Team, class A, class B, class S>
FUSEKIT_HD output_terms gram_terms(const Team& team, std::int64_t L, const A& a, const B& b, const S& scaling) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  return gram_terms_with(team, L, gram_operator_norm(team, L, a, scaling), b, scaling);
}

/// The direct formulation's terms: ‖b‖_D² from b_n, ‖D^-½ XᵀX D^-½‖ bounded by
/// ‖X D^-½‖_F² = the number of non-zero columns, and β = ‖X D^-½‖_F ‖y_n‖
/// (y2 = ‖y_n‖²).
template <class Team, class B, class S>
FUSEKIT_HD output_terms direct_terms(const Team& team, std::int64_t L, const B& b, const S& scaling, double y2) {
  static_assert(is_team_v<Team>, "fusekit: a shared body runs on a team (detail/team/team.hpp)");
  output_terms t;
  t.rhs_norm2 = scaled_rhs_norm2(team, L, b, scaling);
  t.operator_norm = team.template sum<double>(L, [&](std::int64_t i) { return scaling.d(i) > 0 ? 1.0 : 0.0; });
  t.rhs_scale = ::sqrt(t.operator_norm) * ::sqrt(y2);
  return t;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
