// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The trainer's vocabulary: the matrix view, the options a fit takes and the
/// report it returns (see train.hpp for `fit` and `predict`).

#include <fusekit/config.hpp>

#include <cuda/std/mdspan>

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace fusekit {

/// A row-major matrix view: `matrix<const float> X(ptr, K, L)`; X(k, l) is ptr[k·L + l].
template <class T>
using matrix = ::cuda::std::mdspan<T, ::cuda::std::dextents<std::int64_t, 2>>;

/// The update rule.
enum class gd_method {
  plain,     ///< w ← w − lr·grad: the user's loop, iterate for iterate
  nesterov,  ///< Nesterov's momentum j/(j+3), restarted when a step goes uphill
};

/// How the gradient is computed.
enum class gd_formulation {
  automatic,  ///< gram when K > L, else direct
  direct,     ///< grad = Xᵀ(X w − y): 2·K·L flops per output and iteration
  gram,       ///< A = XᵀX, b = Xᵀy once, then grad = A w − b: 2·L² flops
};

/// Where each output's descent starts.
enum class gd_init {
  zeros,       ///< w = 0
  warm_start,  ///< W's values on entry
  uniform,     ///< uniform in [0, 1), from `gd_options::seed` (the same on every backend)
};

/// How one output's training ended.
enum class fit_status : int {
  converged = 0,       ///< gradᵀgrad < tolerance, and the weights are finite
  max_iterations = 1,  ///< the iteration budget ran out first
  diverged = 2,        ///< the gradient or the weights became non-finite, or gradᵀgrad grew 10^12-fold
  stalled = 3,         ///< no 0.1% progress over `stall_window` iterations while above tolerance
};

constexpr const char* to_string(fit_status s) {
  switch (s) {
    case fit_status::converged: return "converged";
    case fit_status::max_iterations: return "max_iterations";
    case fit_status::diverged: return "diverged";
    case fit_status::stalled: return "stalled";
  }
  return "unknown";
}
constexpr const char* to_string(gd_method m) { return m == gd_method::plain ? "plain" : "nesterov"; }
constexpr const char* to_string(gd_formulation f) {
  return f == gd_formulation::direct ? "direct" : (f == gd_formulation::gram ? "gram" : "automatic");
}

/// Where a long fit stands, for `gd_options::progress`.
struct fit_progress {
  std::int64_t iteration = 0;    ///< iterations done by the outputs still running
  std::int64_t running = 0;      ///< outputs not yet stopped
  double worst_grad_norm2 = 0;   ///< the largest last gradᵀgrad among them (0 when none runs)
};

/// What `fit` is asked to do. Every field is checked before anything runs.
struct gd_options {
  std::optional<double> learning_rate;  ///< positive, finite in T; unset: automatic, 1/λmax(XᵀX)
  double tolerance = 1e-8;              ///< on gradᵀgrad, per output; positive, finite in T
  std::int64_t max_iterations = 100000; ///< at least 1: every loop is bounded by it
  gd_init init = gd_init::zeros;
  std::uint64_t seed = 0;  ///< for gd_init::uniform
  gd_method method = gd_method::plain;
  gd_formulation formulation = gd_formulation::automatic;
  std::int64_t stall_window = 1000;  ///< at least 1
  /// Called on the calling thread as the fit goes: on the CPU every
  /// `progress_every` iterations, on the GPU at each host check of the cuBLAS
  /// path (every `train_tuning::batch_iterations`) and once at the end of the
  /// single-launch path. Unset: never. It may not call fusekit on the same data.
  std::function<void(const fit_progress&)> progress;
  std::int64_t progress_every = 1000;  ///< at least 1; CPU only
};

/// How one output (one row of W) trained.
struct output_report {
  std::int64_t iterations = 0;  ///< updates applied
  double grad_norm2 = 0;        ///< gradᵀgrad of the last gradient computed
  fit_status status = fit_status::max_iterations;
};

/// What `fit` returns, on the host.
struct fit_report {
  std::vector<output_report> outputs;  ///< one per row of W
  double learning_rate = 0;            ///< the one used
  gd_formulation formulation = gd_formulation::automatic;  ///< the one used
  const char* path = "cpu";  ///< "cpu", "single_launch", "cublas", "mpi", "nccl/single_launch" or "nccl/cublas"

  [[nodiscard]] bool all_converged() const {
    for (const auto& o : outputs) {
      if (o.status != fit_status::converged) { return false; }
    }
    return true;
  }
  [[nodiscard]] std::int64_t most_iterations() const {
    std::int64_t m = 0;
    for (const auto& o : outputs) { m = o.iterations > m ? o.iterations : m; }
    return m;
  }
};

}  // namespace fusekit
