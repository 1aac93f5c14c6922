// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The trainer's vocabulary: the matrix view, the options a fit takes and the
/// report it returns (see train.hpp for `fit` and `predict`).
///
///     fusekit::gd_options o = fusekit::gd_options::recommended();   // CG, Cholesky, relative rule
///     o.max_iterations = 1000;
///     fusekit::fit_report r = fusekit::fit(fusekit::cpu{}, X, Y, W, o);
///     for (const fusekit::output_report& out : r.outputs) {
///       std::printf("%s after %lld (%s)\n", fusekit::to_string(out.status),
///                   static_cast<long long>(out.iterations), fusekit::to_string(out.rule));
///     }
///
/// Every enum has a `to_string` for messages and tables; the names are the
/// enumerators' own.

#include <fusekit/config.hpp>
#include <fusekit/detail/base/enum_name.hpp>

#include <cuda/std/mdspan>
#include <cuda/std/span>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace fusekit {

/// A row-major matrix view: `matrix<const float> X(ptr, K, L)`; X(k, l) is ptr[k·L + l].
/// A `cuda::std::mdspan` with 64-bit extents: its rows are contiguous and
/// follow one another. `fit` and `predict` also take any rank-2, row-major
/// (layout_right) `cuda::std::mdspan` with the default accessor, of any index
/// type; a strided or column-major one is a compile error that says so.
template <class T>
using matrix = ::cuda::std::mdspan<T, ::cuda::std::dextents<std::int64_t, 2>>;

/// The update rule. docs/trainer.md compares the three on raw-unit
/// data: conjugate gradients with `jacobi` is the one to pick for real data.
enum class gd_method {
  plain,     ///< w ← w − lr·grad: the user's loop, iterate for iterate
  nesterov,  ///< Nesterov's momentum j/(j+3), restarted when a step goes uphill
  /// Conjugate gradients on the normal equations XᵀX w = Xᵀy: CG on A w = b
  /// (Gram formulation), CGLS on X (direct: XᵀX is never formed). At most L
  /// iterations in exact arithmetic, far fewer on clustered spectra; no learning rate.
  conjugate_gradient,
};

/// A change of variables that evens out the features' scales.
enum class gd_preconditioner {
  none,  ///< the problem as given
  /// M = diag(XᵀX)⁻¹ (0 for a column of zeros), i.e. every feature scaled to unit norm.
  /// CG becomes preconditioned CG; plain and Nesterov become scaled gradient
  /// descent, w ← w − lr·M·grad with lr = 1/λmax(M^½ XᵀX M^½): the iterates of
  /// plain descent on the scaled features, mapped back.
  jacobi,
  /// Conjugate gradients only: M = (XᵀX)⁻¹ from a Cholesky factor of the
  /// Jacobi-scaled Gram matrix (shifted where it is singular to working
  /// precision; detail/train/cholesky.hpp), so CG ends in a few updates
  /// whatever κ is, and refinement from X does the rest. Where the fit runs
  /// on the Gram formulation with L ≤ 2048, on every backend (on the GPU the
  /// factor is computed on the device); elsewhere (the direct formulation,
  /// larger L) it is `jacobi`, and fit_report::preconditioner says which ran.
  cholesky,
};

/// Which rule ended an output's training (more precise than its status).
enum class stop_rule : int {
  none = 0,            ///< still running (or not started)
  tolerance,           ///< gradᵀgrad < tolerance
  relative_tolerance,  ///< ‖grad‖_D ≤ relative_tolerance · ‖Xᵀy‖_D (D: diag(XᵀX), see gd_options)
  max_iterations,      ///< the budget ran out
  non_finite,          ///< the gradient or the weights became NaN or inf
  growth,              ///< gradᵀgrad grew 10^12-fold
  rounding_floor,      ///< at the rounding floor and no longer decreasing (stalled)
};

/// How the gradient is computed. Gram costs one pass over X up front and then
/// O(L²) per iteration, independent of K; direct reads X at every iteration
/// and never forms XᵀX, whose rounding can matter when X is ill-conditioned.
enum class gd_formulation {
  automatic,  ///< gram when K > L, else direct
  direct,     ///< grad = Xᵀ(X w − y): 2·K·L flops per output and iteration
  gram,       ///< A = XᵀX, b = Xᵀy once, then grad = A w − b: 2·L² flops
};

/// Where each output's descent starts. Every backend makes the same start
/// from the same options (the uniform values too), so a fit's first iterate
/// does not depend on where it runs.
enum class gd_init {
  zeros,       ///< w = 0
  warm_start,  ///< W's values on entry
  uniform,     ///< uniform in [0, 1), from `gd_options::seed` (the same on every backend)
};

/// How one output's training ended. Only `converged` is a success, and it
/// always comes with finite weights, under every flag (-ffast-math and
/// --use_fast_math included). The values are stable, for code that stores them.
enum class fit_status : int {
  /// gradᵀgrad < tolerance, and the weights and intercepts are finite and in
  /// their type's normal range (CPU and MPI: a W whose scaling back into the
  /// user's units rounds it below that range is `stalled`)
  converged = 0,
  max_iterations = 1,  ///< the iteration budget ran out first
  /// the gradient or the weights became non-finite, or gradᵀgrad grew
  /// 10^12-fold; also a W or b past its type's range once scaled back or rounded
  diverged = 2,
  /// at the rounding floor: ‖grad‖ within the bound of its own rounding error,
  /// c·u·(‖A‖‖w‖ + ‖b‖) on the features scaled to unit norm (u: the unit
  /// roundoff of the type the iterations run in; detail/train/descent.hpp), and no
  /// 0.1% progress over `stall_window` iterations. Slow progress above that
  /// floor is not a stall: it runs on, to `max_iterations`. Also (CPU and MPI,
  /// rule rounding_floor) an answer below the type's range: a weight that loses
  /// bits scaled back into the user's units, or Xᵀy too small for the rules'
  /// squares even after the targets' rescaling.
  stalled = 3,
};

/// The code path a fit took (fit_report::path), for logs and benchmarks.
enum class fit_path {
  cpu,                 ///< fusekit::cpu
  single_launch,       ///< fusekit::cuda: one kernel runs every iteration, A in shared memory
  cublas,              ///< fusekit::cuda: per iteration a cuBLAS GEMM and one launch of the step
  mpi,                 ///< fusekit::mpi
  nccl_single_launch,  ///< fusekit::nccl over the single-launch path
  nccl_cublas,         ///< fusekit::nccl over the cuBLAS path
};

struct output_report;

/// Where a long fit stands, for `gd_options::progress`: enough for a log
/// line, or for a callback that throws to stop the fit (the exception
/// propagates out of `fit`, with W at the iterate reached).
struct fit_progress {
  std::int64_t iteration = 0;   ///< the most iterations any output has done, exactly
  std::int64_t running = 0;     ///< outputs not yet stopped
  double worst_grad_norm2 = 0;  ///< the largest last gradᵀgrad among them (0 when none runs)
  /// Outputs stopped so far, by status: `ended[static_cast<int>(fit_status::converged)]`, ...
  std::int64_t ended[4] = {0, 0, 0, 0};

  /// Counts one output: running, or stopped with its report's status.
  void add(const output_report& output, bool still_running);
  /// One log line: "626 iterations: 0 running, 3 converged" or "4000
  /// iterations: 2 running (worst gradᵀgrad 1.20e-03), 1 max_iterations".
  [[nodiscard]] std::string text() const;
};

/// What `fit` is asked to do. Every field is checked before anything runs.
struct gd_options {
  std::optional<double>
      learning_rate;  ///< positive, finite in T; unset: automatic, 1/λmax(XᵀX) (see train.hpp); CG ignores it
  /// The absolute rule, on gradᵀgrad per output (in the data's units): positive
  /// and finite in T, or 0 (off; only beside a relative_tolerance). Unset (the
  /// default): `default_tolerance` when relative_tolerance is 0, and off when
  /// a relative_tolerance is set, so that a scikit-learn-style tolerance set
  /// alone is the only rule (a gradient of features in 10^-3 units can meet
  /// 1e-8 at w = 0). Set both and either stops the fit.
  std::optional<double> tolerance;
  static constexpr double default_tolerance = 1e-8;  ///< the absolute rule when neither tolerance is set
  /// Also stop when ‖grad‖_D ≤ relative_tolerance·‖b‖_D, b = Xᵀy the gradient at
  /// w = 0 and ‖v‖_D² = Σ v_i²/(XᵀX)_ii (a column of zeros left out): the
  /// gradient of the features scaled to unit norm. Against ‖b‖, as SciPy's
  /// solvers measure it: unlike ‖grad₀‖ it does not depend on the start. In D,
  /// whatever the preconditioner: it does not depend on the features' units
  /// (in the plain norm, a feature in 10^4 units hides one in 10^-3 units).
  /// 0 (the default): off; else in [min_relative_tolerance, 1).
  double relative_tolerance = 0;
  /// The smallest relative_tolerance: its square, 1e-300, is still a normal
  /// double (below it the rule would compare against 0 and never hold).
  static constexpr double min_relative_tolerance = 1e-150;
  std::int64_t max_iterations = 100000;  ///< at least 1: every loop is bounded by it
  gd_init init = gd_init::zeros;         ///< where every output starts
  std::uint64_t seed = 0;                ///< for gd_init::uniform
  /// The update rule; the default is the seed's plain descent, which matches a
  /// hand-written loop iterate for iterate.
  gd_method method = gd_method::plain;
  gd_formulation formulation = gd_formulation::automatic;      ///< how the gradient is computed
  gd_preconditioner preconditioner = gd_preconditioner::none;  ///< for every method
  /// At least 1: iterations without 0.1% progress, at the rounding floor,
  /// before an output is `stalled`.
  std::int64_t stall_window = 1000;
  /// Called on the calling thread as the fit goes: on the CPU every
  /// `progress_every` iterations, on the GPU at each host check of the cuBLAS
  /// path (every `train_tuning::batch_iterations`) and once at the end of the
  /// single-launch path. Unset: never. It may not call fusekit on the same data.
  /// The single launch runs every iteration of every output in one kernel,
  /// with A in shared memory, and the host learns nothing until it ends:
  /// a report on the way would mean ending the kernel, and reloading A, every
  /// `progress_every` iterations. (The cuBLAS path, taken where A does not
  /// fit in a block's shared memory, reports every batch.)
  std::function<void(const fit_progress&)> progress;
  std::int64_t progress_every = 1000;  ///< at least 1; CPU only
  /// Iterative refinement of a Gram fit (the direct one, CGLS, already takes
  /// its gradient from X: it is left alone), 0 to `max_refinement_steps`
  /// (default 0: off). Each step takes every converged output's residual from X itself,
  /// r = y − X w (not from A = XᵀX, whose rounding bounds the fit), solves
  /// XᵀX d = Xᵀr from d = 0 by the same method, preconditioner and rules
  /// (the relative rule against ‖Xᵀr‖_D), and sets w ← w + d when d is finite
  /// and its gradient is no larger than w's. The solve has half as many
  /// iterations as the fit took (and no output passes `max_iterations`); its updates
  /// count in the output's iterations; status and rule stay the fit's. On raw-unit
  /// data one step takes the error of W from κ·rtol to about (κ·rtol)²
  /// (docs/trainer.md).
  std::int64_t refinement_steps = 0;
  static constexpr std::int64_t max_refinement_steps = 8;  ///< the most `refinement_steps` takes
  /// L2 regularization λ ≥ 0 (finite): minimize Σ_k s_k‖y_k − W x_k − b‖² + λ‖W‖_F²,
  /// scikit-learn's Ridge(alpha = λ); the intercept is not penalized. CPU and MPI.
  double ridge = 0;
  /// Fit an intercept b (N values, written to fit_extras::intercept): the data
  /// are centred by their (weighted) means first, as scikit-learn does. CPU and MPI.
  bool fit_intercept = false;

  /// The method for real data (features in their own units, correlated,
  /// ill-conditioned, with an intercept column): conjugate gradients with
  /// the Cholesky preconditioner (Jacobi where it does not run: see
  /// gd_preconditioner), the relative tolerance alone (1e-13; `tolerance`
  /// unset, so the features' units do not matter), 10^5 iterations at most,
  /// and up to two steps of refinement (a step that changes nothing ends it).
  /// 1e-13 is about 1000 u in double, above the rounding floor of the
  /// gradient for L up to a few hundred; the error of W is then about
  /// κ·1e-13 before refinement, κ the condition number of the features scaled
  /// to unit norm, and below 1e-8 after it for κ up to about 10^6
  /// (docs/trainer.md, "Every kind of data").
  /// `linear_association`'s default. The fields' own defaults stay the seed's
  /// plain gradient descent.
  static gd_options recommended() {
    gd_options o;
    o.method = gd_method::conjugate_gradient;
    o.preconditioner = gd_preconditioner::cholesky;
    o.relative_tolerance = 1e-13;
    o.refinement_steps = 2;
    return o;
  }
};

/// What a fit takes and gives beside X, Y and W (fusekit::fit's last
/// argument; CPU and MPI): per-row sample weights, and the intercepts.
template <class T>
struct fit_extras {
  /// K weights s_k ≥ 0, finite (this process's rows); empty: all 1. A weight
  /// counts as that many copies of its row, as in scikit-learn, so only their
  /// ratios (and λ against them) matter: any common scale works, subnormal
  /// (1e-310) to huge (1e308), read from the bits also under -ffast-math.
  /// At least one weight over all processes is positive (else
  /// invalid_argument naming sample_weight); a process without rows passes
  /// none. Shares no byte with W or the intercepts.
  ::cuda::std::span<const T> sample_weight{};
  /// N values or none, written: b with gd_options::fit_intercept, else 0;
  /// empty: not written. Shares no byte with X, Y, W or the weights.
  ::cuda::std::span<T> intercept{};
};

/// How one output (one row of W) trained. The status says whether its row of
/// W is a solution; the rule, which stopping rule said so; the iterations and
/// the last gradᵀgrad, how far it went.
struct output_report {
  std::int64_t iterations = 0;  ///< updates applied (a refinement's included)
  double grad_norm2 = 0;        ///< gradᵀgrad of the last gradient computed
  fit_status status = fit_status::max_iterations;
  stop_rule rule = stop_rule::none;  ///< which rule gave the status
};

/// What `fit` returns, on the host: one report per output and what the fit
/// chose. A fit has succeeded when `all_converged()`; the other statuses say
/// per output why not. W then holds, on every backend, the best of the best
/// iterate seen, the iterate reached, the start and W = 0 by the residual
/// ‖y − Xw‖² (docs/trainer.md, "W on every status").
struct fit_report {
  std::vector<output_report> outputs;                          ///< one per row of W
  double learning_rate = 0;                                    ///< the one used
  gd_formulation formulation = gd_formulation::automatic;      ///< the one used
  fit_path path = fit_path::cpu;                               ///< the code path it took (`to_string` names it)
  gd_method method = gd_method::plain;                         ///< the update rule used
  gd_preconditioner preconditioner = gd_preconditioner::none;  ///< the preconditioner that ran
  /// Why `preconditioner` is not the one the options asked for ("" when it
  /// is): the Cholesky preconditioner runs on the Gram formulation with
  /// L ≤ 2048 only, and Jacobi takes its place elsewhere (gd_preconditioner).
  const char* preconditioner_note = "";

  /// Whether every output converged: the one check most callers need.
  [[nodiscard]] bool all_converged() const {
    for (const auto& o : outputs) {
      if (o.status != fit_status::converged) { return false; }
    }
    return true;
  }
  /// The iterations of the output that took the most.
  [[nodiscard]] std::int64_t most_iterations() const {
    std::int64_t m = 0;
    for (const auto& o : outputs) { m = o.iterations > m ? o.iterations : m; }
    return m;
  }
  /// One paragraph for a log: how many outputs ended with each status, and,
  /// when not every output converged, what to try, from the statuses and the
  /// method used. For example "1 of 1 outputs max_iterations (plain, 1000000
  /// iterations). Plain gradient descent needs about κ(XᵀX) iterations: try
  /// fusekit::gd_options::recommended() (conjugate gradients with the Cholesky
  /// preconditioner), which reaches the least-squares optimum in at most L
  /// iterations in exact arithmetic."
  [[nodiscard]] std::string summary() const;
};

// ---- names and texts: to_string of every enum above, and the progress and
// report texts for logs ----

/// The status's name: "converged", "max_iterations", "diverged" or "stalled".
constexpr const char* to_string(fit_status s) {
  constexpr const char* names[] = {"converged", "max_iterations", "diverged", "stalled"};
  return detail::enum_name(names, s);
}

/// The method's name: "plain", "nesterov" or "conjugate_gradient".
constexpr const char* to_string(gd_method m) {
  constexpr const char* names[] = {"plain", "nesterov", "conjugate_gradient"};
  return detail::enum_name(names, m);
}

/// The preconditioner's name: "none", "jacobi" or "cholesky".
constexpr const char* to_string(gd_preconditioner p) {
  constexpr const char* names[] = {"none", "jacobi", "cholesky"};
  return detail::enum_name(names, p);
}

/// The rule's name, as the enumerator is spelled.
constexpr const char* to_string(stop_rule r) {
  constexpr const char* names[] = {"none",       "tolerance", "relative_tolerance", "max_iterations",
                                   "non_finite", "growth",    "rounding_floor"};
  return detail::enum_name(names, r);
}

/// The formulation's name: "automatic", "direct" or "gram".
constexpr const char* to_string(gd_formulation f) {
  constexpr const char* names[] = {"automatic", "direct", "gram"};
  return detail::enum_name(names, f);
}

/// The start's name: "zeros", "warm_start" or "uniform".
constexpr const char* to_string(gd_init i) {
  constexpr const char* names[] = {"zeros", "warm_start", "uniform"};
  return detail::enum_name(names, i);
}

/// The path's name: "cpu", "single_launch", "cublas", "mpi",
/// "nccl/single_launch" or "nccl/cublas".
constexpr const char* to_string(fit_path p) {
  constexpr const char* names[] = {"cpu", "single_launch", "cublas", "mpi", "nccl/single_launch", "nccl/cublas"};
  return detail::enum_name(names, p);
}

inline void fit_progress::add(const output_report& output, bool still_running) {
  iteration = output.iterations > iteration ? output.iterations : iteration;
  if (still_running) {
    ++running;
    worst_grad_norm2 = output.grad_norm2 > worst_grad_norm2 ? output.grad_norm2 : worst_grad_norm2;
  } else {
    ++ended[static_cast<int>(output.status)];
  }
}

inline std::string fit_progress::text() const {
  char worst[32];
  std::snprintf(worst, sizeof worst, "%.2e", worst_grad_norm2);
  std::string line = std::to_string(iteration) + " iterations: " + std::to_string(running) + " running";
  if (running > 0) { line += std::string(" (worst gradT.grad ") + worst + ")"; }
  for (fit_status s : {fit_status::converged, fit_status::max_iterations, fit_status::stalled, fit_status::diverged}) {
    if (ended[static_cast<int>(s)] > 0) {
      line += ", " + std::to_string(ended[static_cast<int>(s)]) + " " + to_string(s);
    }
  }
  return line;
}

inline std::string fit_report::summary() const {
  std::int64_t count[4] = {0, 0, 0, 0};
  for (const auto& o : outputs) { ++count[static_cast<int>(o.status)]; }
  std::string text;
  for (fit_status s : {fit_status::converged, fit_status::max_iterations, fit_status::stalled, fit_status::diverged}) {
    if (count[static_cast<int>(s)] == 0) { continue; }
    text += (text.empty() ? "" : ", ") + std::to_string(count[static_cast<int>(s)]) + " of " +
            std::to_string(outputs.size()) + " outputs " + to_string(s);
  }
  if (outputs.empty()) { text = "no outputs"; }
  text +=
      std::string(" (") + to_string(method) +
      (preconditioner != gd_preconditioner::none ? std::string(" with ") + to_string(preconditioner) : std::string()) +
      ", at most " + std::to_string(most_iterations()) + " iterations).";
  if (*preconditioner_note != '\0') { text += std::string(" ") + preconditioner_note; }
  bool const slow =
      count[static_cast<int>(fit_status::max_iterations)] + count[static_cast<int>(fit_status::stalled)] > 0;
  bool const descent = method != gd_method::conjugate_gradient;
  if (count[static_cast<int>(fit_status::diverged)] > 0 && descent) {
    text +=
        " The iterates grew without bound: leave learning_rate unset (automatic, 1/λmax(XᵀX)) or use "
        "fusekit::gd_options::recommended() (conjugate gradients need no learning rate).";
  } else if (count[static_cast<int>(fit_status::diverged)] > 0) {
    text += " The iterates became non-finite: check X and Y for values near the type's range, or train in double.";
  }
  if (slow && descent) {
    text +=
        " Plain and Nesterov descent need about κ(XᵀX) iterations on features of different scales: try "
        "fusekit::gd_options::recommended() (conjugate gradients with the Cholesky preconditioner), which "
        "reaches the least-squares optimum in at most L iterations in exact arithmetic.";
  } else if (slow && preconditioner == gd_preconditioner::none) {
    text +=
        " Try fusekit::gd_options::recommended() (the Cholesky preconditioner) or preconditioner = jacobi: they "
        "even out the features' scales.";
  } else if (count[static_cast<int>(fit_status::stalled)] > 0) {
    text +=
        " A stalled output is at the rounding floor of its type: W is as accurate as the data's conditioning "
        "allows there; train in double, or ask for a looser relative_tolerance.";
  } else if (slow) {
    text += " The data are ill-conditioned: raise max_iterations, or train in double (docs/trainer.md).";
  }
  return text;
}

}  // namespace fusekit
