// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU trainer's buffers: every device temporary of a fit in one fixed
/// order (from the policy's resource or a caller's workspace), and the
/// outputs' states read back from them.
#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/train/descent_state.hpp>
#include <fusekit/error.hpp>
#include <fusekit/policy.hpp>
#include <fusekit/train_types.hpp>

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// Every device temporary of a fit, taken in one fixed order from the
/// policy's resource or from a caller's workspace (`arena`); with a measuring
/// arena, what a workspace must hold. A null size is a buffer the path does not use.
template <class T>
struct fit_buffers {
  stream_buffer<std::byte> cublas_workspace;  ///< cuBLAS's (train_tuning::cublas_workspace_bytes)
  stream_buffer<T> A, B;                      ///< XᵀX; YᵀX
  stream_buffer<double> power;                ///< the power iteration's two vectors and λ
  stream_buffer<output_report> reports;       ///< single launch
  stream_buffer<T> D, previous, point, G;     ///< cuBLAS path: residual (direct), iterates, gradients
  stream_buffer<T> Q;                         ///< cuBLAS path, CGLS: X·Pᵀ, output by output (N × K)
  stream_buffer<descent_state<T>> states;     ///< cuBLAS path
  stream_buffer<int> running;                 ///< cuBLAS path
  stream_buffer<T> correction, residual;      ///< refinement: D (N × L) and the system's scratch

  fit_buffers(const cuda& policy, workspace_arena* arena, std::int64_t K, std::int64_t L, std::int64_t N, bool gram,
              bool automatic_rate, bool single, std::int64_t cublas_bytes, bool cgls = false, bool refine = false,
              std::int64_t residual_elements = 0)
      : cublas_workspace(policy, cublas_bytes, arena),
        A(policy, L * L, arena),
        B(policy, N * L, arena),
        power(policy, automatic_rate ? 2 * L + 1 : 0, arena),
        reports(policy, single ? N : 0, arena),
        D(policy, single || gram ? 0 : K * N, arena),
        previous(policy, single ? 0 : N * L, arena),
        point(policy, single ? 0 : N * L, arena),
        G(policy, single ? 0 : N * L, arena),
        Q(policy, cgls ? K * N : 0, arena),
        states(policy, single ? 0 : N, arena),
        running(policy, single ? 0 : 1, arena),
        correction(policy, refine ? N * L : 0, arena),
        residual(policy, refine ? residual_elements : 0, arena) {}
};

/// The outputs' states, copied to the host (synchronizes).
template <class T>
std::vector<descent_state<T>> read_states(const cuda& policy, const fit_buffers<T>& buf, std::int64_t N) {
  std::vector<descent_state<T>> states(static_cast<std::size_t>(N));
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(states.data(), buf.states.get(), states.size() * sizeof(descent_state<T>),
                                   cudaMemcpyDeviceToHost, policy.stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  return states;
}

/// Where the outputs stand after `done` iterations, for `gd_options::progress`.
template <class T>
fit_progress progress_of(const std::vector<descent_state<T>>& states) {
  fit_progress now;
  for (const auto& s : states) { now.add(s.report, s.running); }
  return now;
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
