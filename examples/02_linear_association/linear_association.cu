// SPDX-License-Identifier: Apache-2.0
//
// 02_linear_association — train a linear association network with gradient descent
//
// K input vectors of length L map to K output vectors of length N through
// weights W (N × L): Y ≈ X Wᵀ. The user's trainer fits one output at a time,
//
//     repeat  delta = X w − y_n;  grad = Xᵀ delta;  w = w − lr · grad   until gradᵀgrad < tol
//
// In NumPy it hits a wall around K = L = N = 9; moved to the GPU one array
// operation at a time it got slower, every operation a kernel launch. fusekit
// runs the whole fit in one kernel when the problem is small, picks the learning
// rate itself (1/λmax of XᵀX), offers Nesterov's accelerated descent, and never
// loops forever: each output ends converged, diverged, stalled or out of
// iterations. For real data (features in their own units, correlated columns)
// pick `gd_options::recommended()`: conjugate gradients with a Cholesky
// preconditioner (its factor computed on the GPU or the CPU), a few
// iterations whatever the conditioning, no learning rate to choose.
//
// The program builds X (uniform [0, 1)) and Y = X W_trueᵀ from known weights,
// fits W with plain and Nesterov descent and with the recommended method,
// reports status, iterations, time, the error of W against W_true and of
// predict against Y. GPU when present, else CPU.
//
// Usage: 02_linear_association [K L N]       (default 1000 100 10); exit status 0 when verified.

#include <fusekit/fusekit.cuh>
#include <fusekit/train.cuh>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

// The same training as a model object, for code shaped like `net.fit(X, Y)`:
// fusekit::linear_association owns W in the policy's memory space and keeps
// the last report; it calls the same fit and predict. X and Y are in that space.
template <class Policy>
bool fit_as_a_model(const Policy& policy, const double* X, const double* Y, std::int64_t K, std::int64_t L,
                    std::int64_t N, const std::vector<double>& W_true) {
  // The model's default options are gd_options::recommended().
  fusekit::linear_association<double, Policy> net(L, N, fusekit::gd_options::recommended(), policy);
  fusekit::fit_report const report =
      net.fit(fusekit::matrix<const double>(X, K, L), fusekit::matrix<const double>(Y, K, N));
  std::vector<double> W(static_cast<std::size_t>(N * L));
  if constexpr (std::is_same_v<Policy, fusekit::cuda>) {
    FUSEKIT_CUDA_TRY(
        cudaMemcpy(W.data(), net.weights().data_handle(), W.size() * sizeof(double), cudaMemcpyDeviceToHost));
  } else {
    std::memcpy(W.data(), net.weights().data_handle(), W.size() * sizeof(double));
  }
  double w_err = 0;
  for (std::size_t i = 0; i < W.size(); ++i) { w_err = std::max(w_err, std::fabs(W[i] - W_true[i])); }
  std::printf("  as a model (linear_association): %s, %lld iterations; max |W - W_true| %.1e\n",
              report.all_converged() ? "all converged" : "NOT all converged",
              static_cast<long long>(net.last_report().most_iterations()), w_err);
  return report.all_converged() && w_err < 1e-3;
}

int main(int argc, char** argv) {
  std::int64_t const K = argc > 3 ? std::atoll(argv[1]) : 1000;
  std::int64_t const L = argc > 3 ? std::atoll(argv[2]) : 100;
  std::int64_t const N = argc > 3 ? std::atoll(argv[3]) : 10;
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> X(K * L), W_true(N * L), Y(K * N);
  for (auto& x : X) { x = uniform(gen); }
  for (auto& w : W_true) { w = normal(gen); }
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) {
      double s = 0;
      for (std::int64_t l = 0; l < L; ++l) { s += X[k * L + l] * W_true[n * L + l]; }
      Y[k * N + n] = s;
    }
  }

  bool const gpu = fusekit::has_cuda_device();
  double *d_X = nullptr, *d_Y = nullptr, *d_W = nullptr, *d_Yhat = nullptr;
  if (gpu) {
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_X, X.size() * sizeof(double)));
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_Y, Y.size() * sizeof(double)));
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_W, W_true.size() * sizeof(double)));
    FUSEKIT_CUDA_TRY(cudaMalloc(&d_Yhat, Y.size() * sizeof(double)));
    FUSEKIT_CUDA_TRY(cudaMemcpy(d_X, X.data(), X.size() * sizeof(double), cudaMemcpyHostToDevice));
    FUSEKIT_CUDA_TRY(cudaMemcpy(d_Y, Y.data(), Y.size() * sizeof(double), cudaMemcpyHostToDevice));
  }
  std::printf("linear association network, K = %lld, L = %lld, N = %lld, on the %s\n", static_cast<long long>(K),
              static_cast<long long>(L), static_cast<long long>(N), gpu ? "GPU" : "CPU");

  bool ok = true;
  for (auto method :
       {fusekit::gd_method::plain, fusekit::gd_method::nesterov, fusekit::gd_method::conjugate_gradient}) {
    bool const cg = method == fusekit::gd_method::conjugate_gradient;
    fusekit::gd_options opt =
        cg ? fusekit::gd_options::recommended() : fusekit::gd_options{};  // learning rate: automatic
    if (!cg) { opt.tolerance = 1e-8; }
    opt.max_iterations = 1000000;
    opt.method = method;
    // A long fit reports where it stands: here every 4000 iterations (CPU), or
    // at each host check (GPU).
    opt.progress_every = 4000;
    opt.progress = [](const fusekit::fit_progress& now) { std::printf("    ... %s\n", now.text().c_str()); };
    std::vector<double> W(N * L), Y_hat(K * N);
    auto const t0 = std::chrono::steady_clock::now();
    fusekit::fit_report report;
    if (gpu) {
      report = fusekit::fit(fusekit::cuda{}, fusekit::matrix<const double>(d_X, K, L),
                            fusekit::matrix<const double>(d_Y, K, N), fusekit::matrix<double>(d_W, N, L), opt);
      fusekit::predict(fusekit::cuda{}, fusekit::matrix<const double>(d_X, K, L),
                       fusekit::matrix<const double>(d_W, N, L), fusekit::matrix<double>(d_Yhat, K, N));
      FUSEKIT_CUDA_TRY(cudaMemcpy(W.data(), d_W, W.size() * sizeof(double), cudaMemcpyDeviceToHost));
      FUSEKIT_CUDA_TRY(cudaMemcpy(Y_hat.data(), d_Yhat, Y_hat.size() * sizeof(double), cudaMemcpyDeviceToHost));
    } else {
      report =
          fusekit::fit(fusekit::cpu{}, fusekit::matrix<const double>(X.data(), K, L),
                       fusekit::matrix<const double>(Y.data(), K, N), fusekit::matrix<double>(W.data(), N, L), opt);
      fusekit::predict(fusekit::cpu{}, fusekit::matrix<const double>(X.data(), K, L),
                       fusekit::matrix<const double>(W.data(), N, L), fusekit::matrix<double>(Y_hat.data(), K, N));
    }
    double const ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    double w_err = 0, y_err = 0;
    for (std::size_t i = 0; i < W.size(); ++i) { w_err = std::max(w_err, std::fabs(W[i] - W_true[i])); }
    for (std::size_t i = 0; i < Y.size(); ++i) { y_err = std::max(y_err, std::fabs(Y_hat[i] - Y[i])); }
    std::printf(
        "  %-9s %-13s %s, lr %.3g, %lld iterations (slowest output), %.1f ms; max |W - W_true| %.1e, max |Y_hat - Y| "
        "%.1e\n",
        fusekit::to_string(method), fusekit::to_string(report.path),
        report.all_converged() ? "all converged" : "NOT all converged", report.learning_rate,
        static_cast<long long>(report.most_iterations()), ms, w_err, y_err);
    // Converged means gradᵀgrad < 1e-8 (CG: the relative rule, 1e-12); on this consistent system W then
    // sits within ~1e-4 of W_true.
    ok = ok && report.all_converged() && w_err < 1e-3 && y_err < 1e-3;
  }
  ok = ok && (gpu ? fit_as_a_model(fusekit::cuda{}, d_X, d_Y, K, L, N, W_true)
                  : fit_as_a_model(fusekit::cpu{}, X.data(), Y.data(), K, L, N, W_true));
  if (gpu) {
    FUSEKIT_CUDA_TRY(cudaFree(d_X));
    FUSEKIT_CUDA_TRY(cudaFree(d_Y));
    FUSEKIT_CUDA_TRY(cudaFree(d_W));
    FUSEKIT_CUDA_TRY(cudaFree(d_Yhat));
  }
  std::printf("%s\n", ok ? "verified" : "FAILED verification");
  return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
