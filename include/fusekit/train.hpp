// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Gradient-descent trainer for the linear association network: K input
/// vectors of length L (X, K × L) map to K outputs of length N (Y, K × N)
/// through W (N × L), Y ≈ X Wᵀ. Each output n trains on its own, as the user's
/// loop does:
///
///     repeat  delta = X w − y_n;  grad = Xᵀ delta;  w = w − lr · grad   until gradᵀgrad < tol
///
/// `iterations` counts the updates; the last update uses the gradient that met
/// the tolerance, as in that loop.
///
///     fusekit::gd_options opt;  opt.tolerance = 1e-8;  opt.max_iterations = 100000;
///     fusekit::fit_report r = fusekit::fit(fusekit::cpu{}, X, Y, W, opt);
///     fusekit::predict(fusekit::cpu{}, X, W, Y_hat);
///
/// * Views are row-major `cuda::std::mdspan`s (`fusekit::matrix<T>`), host
///   memory for `fusekit::cpu`, device memory for `fusekit::cuda`; float or double.
/// * For real data (features in their own units, correlated, ill-conditioned,
///   an intercept column) use `gd_options::recommended()`: conjugate gradients
///   with the Cholesky preconditioner (Jacobi where it does not run: the
///   direct formulation, L > 2048), the
///   relative tolerance alone and refinement (`refinement_steps`). With
///   Cholesky it ends in a few iterations whatever κ; with Jacobi in at most
///   about L, where plain descent needs O(κ(XᵀX)) and Nesterov O(√κ), and raw
///   units make κ large (10^7–10^14). On rank-deficient data (dependent
///   columns, K < L) CG from W = 0 returns: with `none`, the minimum-norm
///   least-squares solution (np.linalg.lstsq's); with `jacobi`, the one of
///   least ‖D^½ w‖; with `cholesky`, a least-squares solution (docs/trainer.md,
///   "Every kind of data").
///   The fields' defaults stay the seed's plain descent, the user's loop
///   iterate for iterate.
/// * `method`: plain gradient descent (the user's algorithm, iterate for
///   iterate), Nesterov's accelerated gradient with adaptive restart
///   (momentum j/(j+3), j reset to 0 when a step goes uphill, gᵀ(w_new − w) > 0:
///   O'Donoghue and Candès, "Adaptive restart for accelerated gradient
///   schemes", 2015; gradient and stopping rule at the extrapolated point), or
///   `conjugate_gradient`: CG on A w = b (Gram formulation) or CGLS on X
///   (direct: XᵀX is never formed; every backend but fusekit::nccl, which
///   takes the Gram formulation only), which needs no learning rate and
///   confirms `converged` on the residual b − A w itself
///   (detail/train/conjugate_gradient.hpp).
/// * `preconditioner`: `none`, `cholesky` (CG only: train_types.hpp), or `jacobi`, M = diag(XᵀX)⁻¹ (0 for a column of
///   zeros, whose weight then stays 0): every feature scaled to unit norm. CG
///   becomes preconditioned CG. Plain and Nesterov become scaled gradient
///   descent, w ← w − lr·M·grad with lr = 1/λmax(M^½ XᵀX M^½): their iterates
///   are exactly those of the method on the scaled features X·M^½, mapped back
///   (w = M^½ v), so units no longer matter but correlations still do.
/// * `learning_rate`: a value, or (unset) automatic = 1/λ with λ the Rayleigh
///   quotient of a power iteration on XᵀX (on M^½ XᵀX M^½ with Jacobi; λ ≤ λmax,
///   converged to 1e-10). CG ignores it.
/// * `formulation`: `direct` (every iteration touches X: 2·K·L flops per output)
///   or `gram` (A = XᵀX and b = Xᵀy once, then grad = A w − b: 2·L² per
///   output, independent of K); `automatic` picks gram when K > L. The iterates
///   agree up to rounding.
/// * Stopping: `converged` by `tolerance` (gradᵀgrad < tolerance) or by
///   `relative_tolerance` (‖grad‖_D ≤ rtol·‖Xᵀy‖_D, D = diag(XᵀX): against b,
///   as SciPy measures it, rather than the first gradient, so that a warm start
///   does not tighten it; in D, so that rescaling a feature does not change it;
///   `tolerance` unset is off beside it), `max_iterations`, `diverged` (non-finite, or
///   gradᵀgrad above 10^12 times its first value: within about 40 iterations
///   for lr = 3/λmax), `stalled` (at the rounding floor: ‖grad‖ within the bound
///   of its own rounding error and no 0.1% progress over `stall_window`
///   iterations, e.g. a tolerance below what the arithmetic can reach). Slow
///   progress above the floor is not a stall: it runs to `max_iterations`. Each
///   output's report says which rule stopped it (`output_report::rule`).
///   Outputs stop independently; every loop is bounded by `max_iterations`.
///   An output that does not converge ends, on every backend, at the best of its best
///   iterate, the iterate reached, its start and W = 0 (by ‖y − Xw‖²).
/// * `fit` returns a host report, so with `fusekit::cuda` it synchronizes.
///
/// CPU backend: a fit computes in double whatever T is: A, b, the iterates and
/// every sum, and a float W is rounded once at the end (an output whose
/// weights do not fit in float is `diverged`). So float data reach float
/// accuracy: A = XᵀX formed in float would be only about κ(XᵀX)·2^-24 accurate.
/// The GPU backend computes in T.
///
/// Outputs run in parallel (fusekit's threads); within an output the sums run in a fixed
/// order, so results do not depend on the thread count.

#include <fusekit/config.hpp>
#include <fusekit/detail/train/cholesky.hpp>
#include <fusekit/detail/train/cpu.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/train/matrix_traits.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/train_types.hpp>

#include <cuda/std/mdspan>

#include <iterator>
#include <string>
#include <type_traits>

namespace fusekit {

/// Trains W (N × L) so that X Wᵀ ≈ Y, one output (row of W) at a time.
///
/// \param policy  `fusekit::cpu{}` (host memory) or `fusekit::cuda{stream}`
///                 (device memory; include <fusekit/train.cuh>, link fusekit::train)
/// \param X       K × L inputs, one per row; finite; K ≥ 1, L ≥ 1
/// \param Y       K × N targets; finite
/// \param W       N × L weights, written; read first only for `gd_init::warm_start`;
///                 shares no byte with X, Y or an extra (detail/core/checks.hpp,
///                 expect_apart: every output of every call apart from every input
///                 and every other output)
/// \param options learning rate, tolerance, budget, method, formulation, start
/// \returns       a host report: per output its status, iterations and last gradᵀgrad,
///                 and the learning rate, formulation and GPU path used. With
///                 `fusekit::cuda` the call synchronizes the stream.
/// \throws fusekit::invalid_argument for any argument outside these bounds, before W is written
/// \throws fusekit::cuda_error when a CUDA or cuBLAS call fails
template <class Policy, class T>
fit_report fit(const Policy& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W,
               const gd_options& options = {}) {
  return fit(policy, X, Y, W, options, fit_extras<T>{});
}

/// `fit` with sample weights and intercepts (fit_extras), for
/// `gd_options::fit_intercept` and weighted or ridge fits, scikit-learn's
/// LinearRegression and Ridge: minimizes Σ_k s_k ‖y_k − W x_k − b‖² + λ‖W‖_F².
/// On every backend (detail/train/prepare.hpp, detail/train/cuda_prepare.cuh): the data are
/// centred, weighted and extended by copy, in double, and the fit runs on the
/// copy in double; on fusekit::cuda the weights and intercepts are device
/// memory, and on fusekit::nccl each rank's (a rank without rows passes none).
///
///     std::vector<double> s(K, 1.0), b(N);
///     o.fit_intercept = true;  o.ridge = 0.1;
///     fusekit::fit(fusekit::cpu{}, X, Y, W, o, fusekit::fit_extras<double>{s, b});
///     fusekit::predict(fusekit::cpu{}, X, W, b, Y_hat);      // X Wᵀ + b
template <class Policy, class T>
fit_report fit(const Policy& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& options,
               const fit_extras<T>& extras) {
  if constexpr (detail::policy_usable<detail::fit_tag, Policy>()) {
    fit_report report = run_fit(detail::fit_tag{}, policy, X, Y, W, options, extras);
    report.method = options.method;
    if (options.preconditioner != gd_preconditioner::cholesky) {
      report.preconditioner = options.preconditioner;
    } else if (report.preconditioner != gd_preconditioner::cholesky) {
      report.preconditioner =
          gd_preconditioner::jacobi;  // where the formulation or the shape takes Jacobi in its place
      report.preconditioner_note =
          W.extent(1) > detail::cholesky_max_columns
              ? "Jacobi ran in the Cholesky preconditioner's place: L > 2048 (the factor would take L² doubles)."
              : "Jacobi ran in the Cholesky preconditioner's place: the fit ran on the direct formulation (the "
                "factor is of the Gram matrix XᵀX).";
    }
    return report;
  } else {
    return {};
  }
}

/// Y_hat = X Wᵀ (K × N): Y_hat[k, n] = Σ_l X[k, l]·W[n, l], summed in l order.
///
/// \param policy `fusekit::cpu{}` or `fusekit::cuda{stream}` (asynchronous, no allocation)
/// \param X      K × L inputs
/// \param W      N × L weights, as `fit` leaves them
/// \param Y_hat  K × N, written; shares no byte with X or W
/// \throws fusekit::invalid_argument on mismatched extents, null or overlapping views
template <class Policy, class T>
void predict(const Policy& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat) {
  if constexpr (detail::policy_usable<detail::predict_tag, Policy>()) {
    run_predict(detail::predict_tag{}, policy, X, W, Y_hat);
  }
}

/// Y_hat = X Wᵀ + b: `predict` with the intercepts b (N values in any
/// contiguous range, as `fit` wrote them with fit_extras) added to every row,
/// Y_hat[k, n] = (Σ_l X[k, l]·W[n, l]) + b[n], in the same kernel on the GPU:
/// the same bits on every backend. On fusekit::cuda b is device memory; on
/// fusekit::cuda_staged anywhere. X, W and Y_hat as `predict` takes them;
/// Y_hat shares no byte with b either.
template <class Policy, class MX, class MW, class B, class MY,
          std::enable_if_t<detail::all_row_major_v<MX, MW, MY>, int> = 0>
void predict(const Policy& policy, const MX& X, const MW& W, const B& intercept, const MY& Y_hat) {
  using T = std::remove_cv_t<typename MY::element_type>;
  ::cuda::std::span<const T> const b(std::data(intercept), std::size(intercept));
  FUSEKIT_EXPECTS(static_cast<std::int64_t>(b.size()) == static_cast<std::int64_t>(W.extent(0)),
                  "fusekit::predict: intercept has " + std::to_string(b.size()) +
                      " values; it needs one per output (N = " + std::to_string(W.extent(0)) + ")");
  if constexpr (detail::matrices_usable<MX, MW, MY>("predict") &&
                detail::policy_usable<detail::predict_tag, Policy>()) {
    run_predict(detail::predict_tag{}, policy, detail::as_matrix<const T>(X), detail::as_matrix<const T>(W),
                detail::as_matrix<T>(Y_hat), b);
  }
}

/// `fit` for any row-major matrices: X and Y may be views of writable memory
/// (`matrix<T>`), the index type any integer. Element types that do not match,
/// or a const W, are compile errors that name the argument.
template <class Policy, class MX, class MY, class MW,
          std::enable_if_t<detail::all_row_major_v<MX, MY, MW> && !detail::is_core_signature_v<MX, MY, MW>, int> = 0>
fit_report fit(const Policy& policy, const MX& X, const MY& Y, const MW& W, const gd_options& options = {}) {
  using T = std::remove_cv_t<typename MW::element_type>;
  if constexpr (detail::matrices_usable<MX, MY, MW>("fit")) {
    return fit(policy, detail::as_matrix<const T>(X), detail::as_matrix<const T>(Y), detail::as_matrix<T>(W), options);
  } else {
    return {};
  }
}

/// `predict` for any row-major matrices (see that `fit`).
template <class Policy, class MX, class MW, class MY,
          std::enable_if_t<detail::all_row_major_v<MX, MW, MY> && !detail::is_core_signature_v<MX, MW, MY>, int> = 0>
void predict(const Policy& policy, const MX& X, const MW& W, const MY& Y_hat) {
  using T = std::remove_cv_t<typename MY::element_type>;
  if constexpr (detail::matrices_usable<MX, MW, MY>("predict")) {
    predict(policy, detail::as_matrix<const T>(X), detail::as_matrix<const T>(W), detail::as_matrix<T>(Y_hat));
  }
}

/// A strided or column-major view is rejected at compile time: fusekit reads
/// every matrix as row-major and contiguous, and converting such a view to
/// `fusekit::matrix` would read the wrong elements.
template <class Policy, class MX, class MY, class MW,
          std::enable_if_t<detail::any_not_row_major_v<MX, MY, MW>, int> = 0>
fit_report fit(const Policy&, const MX&, const MY&, const MW&, const gd_options& = {}) {
  static_assert(detail::always_false_v<MX>,
                "fusekit::fit reads X, Y and W as row-major contiguous matrices (cuda::std::layout_right); "
                "copy a strided or column-major view into a fusekit::matrix first");
  return {};
}

template <class Policy, class MX, class MW, class MY,
          std::enable_if_t<detail::any_not_row_major_v<MX, MW, MY>, int> = 0>
void predict(const Policy&, const MX&, const MW&, const MY&) {
  static_assert(detail::always_false_v<MX>,
                "fusekit::predict reads X, W and Y_hat as row-major contiguous matrices (cuda::std::layout_right); "
                "copy a strided or column-major view into a fusekit::matrix first");
}

/// X, Y or W given as something else than a matrix view (a std::vector, a
/// pointer): a compile error that says how to wrap it.
template <class Policy, class MX, class MY, class MW, std::enable_if_t<detail::any_not_mdspan_v<MX, MY, MW>, int> = 0>
fit_report fit(const Policy&, const MX&, const MY&, const MW&, const gd_options& = {}) {
  static_assert(detail::always_false_v<MX>,
                "fusekit::fit takes X (K x L), Y (K x N) and W (N x L) as row-major matrix views: wrap a "
                "std::vector as fusekit::matrix<const double>(X.data(), K, L), and W as "
                "fusekit::matrix<double>(W.data(), N, L)");
  return {};
}

template <class Policy, class MX, class MW, class MY, std::enable_if_t<detail::any_not_mdspan_v<MX, MW, MY>, int> = 0>
void predict(const Policy&, const MX&, const MW&, const MY&) {
  static_assert(detail::always_false_v<MX>,
                "fusekit::predict takes X (K x L), W (N x L) and Y_hat (K x N) as row-major matrix views: wrap a "
                "std::vector as fusekit::matrix<const double>(X.data(), K, L), and Y_hat as "
                "fusekit::matrix<double>(Y_hat.data(), K, N)");
}

}  // namespace fusekit
