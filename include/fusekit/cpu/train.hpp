// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// CPU backend of the trainer (contract in train.hpp). Outputs train in
/// parallel (OpenMP); within an output every sum runs in a fixed order, so a
/// result does not depend on the thread count. The descent step and the power
/// iteration are the very code the GPU runs (detail/descent.hpp,
/// detail/power_iteration.hpp), here on a `serial_team`.

#include <fusekit/cpu/parallel.hpp>
#include <fusekit/detail/descent.hpp>
#include <fusekit/detail/dispatch.hpp>
#include <fusekit/detail/power_iteration.hpp>
#include <fusekit/detail/team.hpp>
#include <fusekit/detail/train_checks.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/train_types.hpp>

#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {

/// out[j] += Σ_k s[k·stride]·x[k·L + j] for j < L, k in order: one row of Xᵀ·S.
template <class T>
void add_weighted_rows(T* out, const T* x, std::int64_t K, std::int64_t L, const T* s, std::int64_t stride) {
  for (std::int64_t k = 0; k < K; ++k) {
    T const sk = s[k * stride];
    const T* xk = x + k * L;
    for (std::int64_t j = 0; j < L; ++j) { out[j] = out[j] + sk * xk[j]; }
  }
}

/// A = XᵀX (L × L) and B = YᵀX (N × L, row n is b_n = Xᵀ y_n), sums over k in order.
template <class T>
void cpu_gram(int threads, matrix<const T> X, matrix<const T> Y, std::vector<T>& A, std::vector<T>& B) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  A.assign(static_cast<std::size_t>(L * L), T(0));
  B.assign(static_cast<std::size_t>(N * L), T(0));
  const T* x = X.data_handle();
  const T* y = Y.data_handle();
  (void)threads;
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 4) if (K * L * L >= cpu_parallel_threshold)
#endif
  for (std::int64_t i = 0; i < L; ++i) { add_weighted_rows(A.data() + i * L, x, K, L, x + i, L); }
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (K * L * N >= cpu_parallel_threshold)
#endif
  for (std::int64_t n = 0; n < N; ++n) { add_weighted_rows(B.data() + n * L, x, K, L, y + n, N); }
}

/// The direct formulation's gradient, the user's two products: delta = X·point − y_n,
/// g = Xᵀ·delta, sums in index order.
template <class T>
void direct_gradient(matrix<const T> X, matrix<const T> Y, std::int64_t n, const T* point, T* delta, T* g) {
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  const T* x = X.data_handle();
  for (std::int64_t k = 0; k < K; ++k) {
    T s = T(0);
    for (std::int64_t l = 0; l < L; ++l) { s = s + x[k * L + l] * point[l]; }
    delta[k] = s - Y.data_handle()[k * N + n];
  }
  for (std::int64_t l = 0; l < L; ++l) { g[l] = T(0); }
  for (std::int64_t k = 0; k < K; ++k) {
    T const d = delta[k];
    for (std::int64_t l = 0; l < L; ++l) { g[l] = g[l] + x[k * L + l] * d; }
  }
}

/// u = Xᵀ(X v) in double, XᵀX applied without forming it (the direct
/// formulation's operator for the power iteration); t holds K doubles.
template <class T>
struct normal_operator {
  matrix<const T> X;
  double* t;
  FUSEKIT_HD void operator()(const double* v, double* u) const {
    std::int64_t const K = X.extent(0), L = X.extent(1);
    for (std::int64_t k = 0; k < K; ++k) {
      double s = 0;
      for (std::int64_t l = 0; l < L; ++l) { s += static_cast<double>(X(k, l)) * v[l]; }
      t[k] = s;
    }
    for (std::int64_t l = 0; l < L; ++l) { u[l] = 0; }
    for (std::int64_t k = 0; k < K; ++k) {
      for (std::int64_t l = 0; l < L; ++l) { u[l] += static_cast<double>(X(k, l)) * t[k]; }
    }
  }
};

/// λ of XᵀX without forming it (the direct formulation).
template <class T>
double cpu_direct_power_iteration(matrix<const T> X) {
  std::vector<double> v(static_cast<std::size_t>(X.extent(1))), u(v.size()), t(static_cast<std::size_t>(X.extent(0)));
  return power_iteration(serial_team{}, X.extent(1), v.data(), u.data(), normal_operator<T>{X, t.data()});
}

/// One output's descent on the CPU, advanced in budgets of iterations: its
/// buffers and state live between the calls to `advance`.
template <class T>
struct cpu_output {
  std::vector<T> g, previous, point, delta;
  descent_state<T> state;

  cpu_output(const descent_params<T>& p, std::int64_t n, std::int64_t L, std::int64_t K, T* w)
      : g(static_cast<std::size_t>(L)), previous(g.size()), point(g.size()), delta(static_cast<std::size_t>(K)),
        state(descent_state<T>::start(p)) {
    descent_begin(serial_team{}, p, n, L, w, previous.data(), point.data());
  }

  /// Up to `budget` iterations; `gradient(point, g, delta)` writes the gradient at point.
  template <class Gradient>
  void advance(const descent_params<T>& p, std::int64_t L, T* w, std::int64_t budget, const Gradient& gradient) {
    serial_team const team;
    for (std::int64_t k = 0; k < budget && state.running; ++k) {
      gradient(point.data(), g.data(), delta.data());
      descent_step(team, p, state, L, w, previous.data(), point.data(), element_of<T>{g.data()});
    }
  }
};

/// The descent of every output of W (N × L) from the learning rate in
/// `report`: `gradient(n)` gives output n's gradient function, which takes
/// (point, g, delta) with delta `delta_size` values of scratch. Outputs run in
/// parallel when `parallel`. Fills report.outputs; calls `o.progress`.
template <class T, class GradientOf>
void cpu_descend(const cpu& policy, matrix<T> W, const gd_options& o, std::int64_t delta_size, bool parallel,
                 const GradientOf& gradient, fit_report& report) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  int const threads = cpu_thread_count(policy);
  (void)threads;
  (void)parallel;
  descent_params<T> const p = make_descent_params<T>(o, report.learning_rate);
  report.outputs.resize(static_cast<std::size_t>(N));
  std::vector<cpu_output<T>> outputs;
  outputs.reserve(static_cast<std::size_t>(N));
  for (std::int64_t n = 0; n < N; ++n) { outputs.emplace_back(p, n, L, delta_size, W.data_handle() + n * L); }
  // Without a progress callback one budget covers the whole fit; with one, the
  // outputs advance together `progress_every` iterations at a time.
  std::int64_t const budget = o.progress ? o.progress_every : o.max_iterations;
  for (std::int64_t done = 0; done < o.max_iterations;) {
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (parallel)
#endif
    for (std::int64_t n = 0; n < N; ++n) {
      outputs[static_cast<std::size_t>(n)].advance(p, L, W.data_handle() + n * L, budget, gradient(n));
    }
    done += budget;
    fit_progress now;
    now.iteration = done < o.max_iterations ? done : o.max_iterations;
    for (const auto& out : outputs) {
      if (out.state.running) {
        ++now.running;
        now.worst_grad_norm2 = out.state.report.grad_norm2 > now.worst_grad_norm2 ? out.state.report.grad_norm2
                                                                                   : now.worst_grad_norm2;
      }
    }
    if (o.progress) { o.progress(now); }
    if (now.running == 0) { break; }
  }
  for (std::int64_t n = 0; n < N; ++n) { report.outputs[n] = outputs[static_cast<std::size_t>(n)].state.report; }
}

/// The learning rate of a fit: the caller's, else from λmax(XᵀX), found by
/// the power iteration on A (Gram) or by `direct_lambda()` (direct).
template <class T, class DirectLambda>
double cpu_learning_rate(const gd_options& o, bool gram, const std::vector<T>& A, std::int64_t L,
                         const DirectLambda& direct_lambda) {
  if (o.learning_rate) { return *o.learning_rate; }
  if (gram) {
    std::vector<double> v(static_cast<std::size_t>(L)), u(v.size());
    return automatic_learning_rate<T>(symmetric_power_iteration(serial_team{}, A.data(), L, v.data(), u.data()));
  }
  return automatic_learning_rate<T>(direct_lambda());
}

/// For cpu_descend: output n's gradient, from A and B (Gram) or from X and Y
/// (direct, then `after_direct(g)`, e.g. a sum over MPI ranks).
template <class T, class AfterDirect>
auto cpu_gradient_of(bool gram, const std::vector<T>& A, const std::vector<T>& B, matrix<const T> X,
                     matrix<const T> Y, const AfterDirect& after_direct) {
  const T* const a = A.data();
  const T* const b = B.data();
  return [=](std::int64_t n) {
    return [=](const T* point, T* g, T* delta) {
      std::int64_t const L = X.extent(1);
      if (gram) {
        gram_gradient(serial_team{}, a, b + n * L, L, point, g);
      } else {
        direct_gradient<T>(X, Y, n, point, delta, g);
        after_direct(g);
      }
    };
  };
}

template <class T>
fit_report run(fit_tag, const cpu& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o) {
  check_fit(X, Y, W, o, non_finite_counter<cpu>{policy});
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  fit_report report;
  report.formulation = resolve_formulation(o.formulation, K, L);
  report.path = "cpu";
  std::vector<T> A, B;
  bool const gram = report.formulation == gd_formulation::gram;
  if (gram) { cpu_gram(cpu_thread_count(policy), X, Y, A, B); }
  report.learning_rate = cpu_learning_rate<T>(o, gram, A, L, [&] { return cpu_direct_power_iteration(X); });
  // Outputs in parallel only when one iteration over all of them is work enough:
  // a team for a small fit costs more than it saves, and on a busy machine one
  // descheduled thread stalls the whole call (a (9, 9, 9) fit took 24 ms instead of 0.65).
  bool const parallel = N * L * (gram ? L : K) >= cpu_parallel_threshold;
  cpu_descend<T>(policy, W, o, gram ? 0 : K, parallel, cpu_gradient_of<T>(gram, A, B, X, Y, [](T*) {}), report);
  return report;
}

template <class T>
void run(predict_tag, const cpu& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat) {
  check_predict(X, W, Y_hat);
  std::int64_t const K = X.extent(0), L = X.extent(1), N = W.extent(0);
  int const threads = cpu_thread_count(policy);
  (void)threads;
#if FUSEKIT_HAS_OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (K * N * L >= cpu_parallel_threshold)
#endif
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t n = 0; n < N; ++n) {
      Y_hat(k, n) = predict_at(X.data_handle(), W.data_handle(), L, k, n);
    }
  }
}

}  // namespace detail
}  // namespace fusekit
