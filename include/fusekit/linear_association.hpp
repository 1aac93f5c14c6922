// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `linear_association<T, Policy>`: the trainer as an object, for code that
/// thinks in models (`net.fit(X, Y)`, `net.predict(X, Y_hat)`). It owns W in the
/// policy's memory space (host memory for `fusekit::cpu`, device memory from the
/// policy's resource for `fusekit::cuda`), the options and the last report. It
/// is a thin owner over the free functions `fit` and `predict` (train.hpp),
/// which stay the core: the same calls, the same results, bit for bit.
///
///     fusekit::linear_association<double> net(L, N);            // W: N × L zeros, on the host
///     net.options().max_iterations = 1000;                       // options: gd_options::recommended()
///     fusekit::fit_report r = net.fit(X, Y);                     // X: K × L, Y: K × N
///     net.predict(X, Y_hat);                                     // Y_hat = X Wᵀ + b
///     net.options().fit_intercept = true;  net.fit(X, Y, weights);  // sklearn's fit(X, y, sample_weight)
///
///     fusekit::linear_association<float, fusekit::cuda> gpu_net(L, N, fusekit::gd_options::recommended(),
///                                                               fusekit::cuda{stream});
///     gpu_net.fit(d_X, d_Y);                                     // device views; include <fusekit/train.cuh>
///
/// The model of scikit-learn's LinearRegression and Ridge, on fusekit::cpu:
/// `options().fit_intercept` fits intercepts b (`intercepts()`, N values that
/// `predict` adds), `options().ridge` penalizes λ‖W‖² (not b), and
/// `fit(X, Y, sample_weight)` weighs each row of X as that many copies of it.
/// They minimize Σ_k s_k ‖y_k − W x_k − b‖² + λ‖W‖_F², on a centred and
/// weighted copy of the data in double (docs/trainer.md, "Ridge, an intercept
/// and sample weights"). The GPU model rejects them with a message that says so;
/// its intercepts stay 0.

#include <fusekit/detail/train/storage.hpp>
#include <fusekit/detail/core/checks.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/train.hpp>
#include <fusekit/train_types.hpp>

#include <cstddef>
#include <iterator>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace fusekit {
/// A linear association network Y ≈ X Wᵀ with L inputs and N outputs, its
/// weights W (N × L) owned in `Policy`'s memory space. See the file comment.
template <class T, class Policy = cpu>
class linear_association {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                "fusekit::linear_association trains in float or double");
  static_assert(std::is_same_v<Policy, cpu> || std::is_same_v<Policy, cuda>,
                "fusekit::linear_association runs on fusekit::cpu or fusekit::cuda");

 public:
  /// \param inputs  L, at least 1
  /// \param outputs N, at least 1
  /// \param options what every `fit` uses (`options()` changes them); W starts
  ///                at 0. Default: `gd_options::recommended()`, conjugate
  ///                gradients with the Cholesky preconditioner and refinement,
  ///                the method for real data (not the seed's plain
  ///                descent, `gd_options{}`)
  /// \param policy  the default policy of `fit` and `predict`, and where W lives
  linear_association(std::int64_t inputs, std::int64_t outputs, gd_options options = gd_options::recommended(),
                     const Policy& policy = {})
      : policy_(policy),
        options_(std::move(options)),
        inputs_(checked("inputs (L)", inputs)),
        outputs_(checked("outputs (N)", outputs)),
        weights_(policy, static_cast<std::size_t>(detail::checked_elements(
                             "fusekit::linear_association", "W (outputs x inputs)", outputs, inputs, sizeof(T)))) {}

  /// Trains W on X (K × L) and Y (K × N) with `options()`, on `policy` (same
  /// kind as the model's, e.g. another stream); returns and keeps the report.
  /// \throws fusekit::invalid_argument when X has not L columns or Y not N,
  ///         naming the model's L and N (W untouched), or as `fusekit::fit` throws
  fit_report fit(const Policy& policy, matrix<const T> X, matrix<const T> Y) {
    return fit(policy, X, Y, ::cuda::std::span<const T>());
  }
  /// Trains with one weight per row of X (K values ≥ 0: any contiguous range,
  /// e.g. a std::vector<T>), scikit-learn's `fit(X, y, sample_weight)`; an
  /// intercept with `options().fit_intercept`, ridge with `options().ridge`
  /// (see fusekit::fit with fit_extras; on the GPU the weights are device memory).
  template <class Weights>
  fit_report fit(const Policy& policy, matrix<const T> X, matrix<const T> Y, const Weights& sample_weight) {
    expect_columns("fit", "X", X.extent(1), "inputs", "L", inputs_);
    expect_columns("fit", "Y", Y.extent(1), "outputs", "N", outputs_);
    ::cuda::std::span<const T> const s(std::data(sample_weight), std::size(sample_weight));
    matrix<T> const W(weights_.data(), outputs_, inputs_);
    if constexpr (std::is_same_v<Policy, cpu>) {
      report_ = fusekit::fit(policy, X, Y, W, options_, fit_extras<T>{s, intercepts_});
    } else {  // the intercepts on the device, where predict reads them, and a host copy
      report_ = fusekit::fit(policy, X, Y, W, options_,
                             fit_extras<T>{s, ::cuda::std::span<T>(bias_.data(), intercepts_.size())});
      bias_.copy_to(intercepts_, policy.stream);
    }
    return report_;
  }
  /// `fit(policy, X, Y, sample_weight)` on the model's own policy.
  template <class Weights>
  fit_report fit(matrix<const T> X, matrix<const T> Y, const Weights& sample_weight) {
    return fit(policy_, X, Y, sample_weight);
  }
  /// Trains W on X and Y with `options()`, on the model's own policy. A fit
  /// starts from the W the model holds when `options().init` is
  /// `gd_init::warm_start`, so repeated fits continue one another; the
  /// report's statuses say, per output, whether W is a solution.
  fit_report fit(matrix<const T> X, matrix<const T> Y) { return fit(policy_, X, Y); }

  /// Y_hat (K × N) = X Wᵀ + b on `policy` (b: intercepts(), 0 unless fitted).
  /// \throws fusekit::invalid_argument when X has not L columns or Y_hat not N,
  ///         naming the model's L and N, or as `fusekit::predict` throws
  void predict(const Policy& policy, matrix<const T> X, matrix<T> Y_hat) const {
    expect_columns("predict", "X", X.extent(1), "inputs", "L", inputs_);
    expect_columns("predict", "Y_hat", Y_hat.extent(1), "outputs", "N", outputs_);
    if constexpr (std::is_same_v<Policy, cpu>) {
      fusekit::predict(policy, X, weights(), ::cuda::std::span<const T>(intercepts_), Y_hat);
    } else {
      fusekit::predict(policy, X, weights(), ::cuda::std::span<const T>(bias_.data(), intercepts_.size()), Y_hat);
    }
  }
  /// Y_hat (K × N) = X Wᵀ + b on the model's own policy.
  void predict(matrix<const T> X, matrix<T> Y_hat) const { predict(policy_, X, Y_hat); }

  /// W (N × L), in the policy's memory space: row n holds output n's weights.
  [[nodiscard]] matrix<const T> weights() const { return matrix<const T>(weights_.data(), outputs_, inputs_); }
  /// The intercepts b (N values, on the host): 0 until a fit with
  /// `options().fit_intercept` sets them; `predict` adds them.
  [[nodiscard]] const std::vector<T>& intercepts() const { return intercepts_; }
  /// L, the number of inputs (columns of X).
  [[nodiscard]] std::int64_t inputs() const { return inputs_; }
  /// N, the number of outputs (columns of Y).
  [[nodiscard]] std::int64_t outputs() const { return outputs_; }
  /// The options every `fit` uses, to change in place.
  [[nodiscard]] gd_options& options() { return options_; }
  /// The options every `fit` uses.
  [[nodiscard]] const gd_options& options() const { return options_; }
  /// The report of the last `fit` (empty before the first).
  [[nodiscard]] const fit_report& last_report() const { return report_; }

 private:
  static std::int64_t checked(const char* name, std::int64_t v) {
    FUSEKIT_EXPECTS(v >= 1, std::string("fusekit::linear_association: ") + name + " is " + std::to_string(v) +
                                "; it must be at least 1");
    return v;
  }

  /// `name` (given to `function`) has `want` columns: the model's L or N,
  /// named as the user built the model (its W is the model's own, never named).
  void expect_columns(const char* function, const char* name, std::int64_t given, const char* what, const char* symbol,
                      std::int64_t want) const {
    FUSEKIT_EXPECTS(given == want, std::string("fusekit::linear_association::") + function + ": " + name + " has " +
                                       std::to_string(given) + " columns but the model has " + symbol + " = " +
                                       std::to_string(want) + " " + what + " (it was built as linear_association(" +
                                       std::to_string(inputs_) + ", " + std::to_string(outputs_) + "))");
  }

  Policy policy_;
  gd_options options_;
  std::int64_t inputs_;
  std::int64_t outputs_;
  detail::weights_storage<T, Policy> weights_;
  std::vector<T> intercepts_ = std::vector<T>(static_cast<std::size_t>(outputs_), T(0));
  /// The intercepts where the policy's fit and predict read them: the GPU's
  /// device copy (the CPU reads intercepts_ itself, and keeps none).
  detail::weights_storage<T, Policy> bias_{policy_, std::is_same_v<Policy, cpu> ? 0 : intercepts_.size()};
  fit_report report_;
};

}  // namespace fusekit
