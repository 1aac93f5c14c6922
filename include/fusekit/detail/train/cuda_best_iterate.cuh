// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The best-iterate rule on the GPU (detail/train/best_iterate.hpp holds what
/// every backend shares): each output's start and best iterate are kept on the
/// device by its block as it iterates (best_iterate_view,
/// detail/train/output_bodies.hpp); after the iterations, when an output did
/// not converge, the residuals ‖y_n − X w‖² of its candidates are taken from X
/// by `residual_terms_kernel` (a block per output, candidate and slice of
/// rows: the body the CPU runs over all its rows), and the CPU's decision
/// picks; after a refinement that changed an output, the same kernel decides
/// whether the refined w stays. A fit whose outputs all converge and that
/// refines nothing runs no kernel here: the rule costs it the copies of w
/// into its best iterate as the fit goes.

#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/core/cuda_launch.cuh>
#include <fusekit/detail/team/block_team.cuh>
#include <fusekit/detail/train/best_iterate.hpp>
#include <fusekit/detail/train/cuda_buffers.cuh>
#include <fusekit/train_types.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace train {

/// Block b of the residual terms (residual_terms_block, best_iterate.hpp).
template <class T>
__global__ void residual_terms_kernel(const T* X, const T* Y, std::int64_t K, std::int64_t L, std::int64_t N,
                                      residual_candidates<T> c, std::int64_t slice_rows, std::int64_t slices, T* out) {
  __shared__ double scratch[block_team_scratch];
  residual_terms_block(block_team(scratch), static_cast<std::int64_t>(blockIdx.x), X, Y, K, L, N, c, slice_rows, slices,
                       out);
}

/// The residual terms of every output's candidates over device rows X (K × L)
/// and Y (K × N): [(n·count + c)·2] = ‖y_n − X w_c‖², [… + 1] = its rounding
/// sum (times residual2_rounding_factor: the bound), each the slices' sums in
/// T added in slice order in double; then K. `out`: room for the partial sums
/// (2·N·count·residual_most_slices values: fit_buffers::terms). On the
/// policy's stream (synchronizes).
template <class T>
std::vector<double> device_residual_terms(const cuda& policy, const T* X, const T* Y, std::int64_t K, std::int64_t L,
                                          std::int64_t N, const residual_candidates<T>& c, T* out) {
  std::int64_t const slice_rows = residual_slice_rows(K);
  std::int64_t const slices = K > 0 ? (K + slice_rows - 1) / slice_rows : 0;
  std::int64_t const pairs = N * c.count;
  std::vector<double> terms(static_cast<std::size_t>(2 * pairs + 1), 0.0);
  terms.back() = static_cast<double>(K);
  if (slices == 0 || pairs == 0) { return terms; }
  launch(residual_terms_kernel<T>, pairs * slices, 256, 0, policy.stream, X, Y, K, L, N, c, slice_rows, slices, out);
  std::vector<T> host(static_cast<std::size_t>(2 * pairs * slices));
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(host.data(), out, host.size() * sizeof(T), cudaMemcpyDeviceToHost, policy.stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  for (std::int64_t p = 0; p < pairs; ++p) {
    for (std::int64_t s = 0; s < slices; ++s) {
      terms[2 * p] += static_cast<double>(host[(p * slices + s) * 2]);
      terms[2 * p + 1] += static_cast<double>(host[(p * slices + s) * 2 + 1]);
    }
  }
  return terms;
}

/// The best-iterate rule after a fit's iterations (keep_best_iterate's, in
/// T): each output that did not converge ends at the candidate
/// best_candidate picks among its best iterate, W as reached, its start and
/// W = 0 (buf.kept), by `system.residual_terms`. W is device memory.
template <class T, class System>
void gpu_keep_best_iterate(const cuda& policy, const System& system, const fit_buffers<T>& buf, matrix<T> W,
                           const fit_report& report) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  bool const any = std::any_of(report.outputs.begin(), report.outputs.end(),
                               [](const output_report& o) { return o.status != fit_status::converged; });
  if (!any || L == 0) { return; }
  residual_candidates<T> const c{{buf.best.get(), W.data_handle(), buf.start.get(), nullptr}, 4};
  std::vector<double> const terms = system.residual_terms(policy, c, N, L, buf.terms.get());
  double const K = terms.back();
  std::size_t const row = static_cast<std::size_t>(L) * sizeof(T);
  for (std::int64_t n = 0; n < N; ++n) {
    if (report.outputs[static_cast<std::size_t>(n)].status == fit_status::converged) { continue; }
    T r2[4];
    for (int k = 0; k < 4; ++k) { r2[k] = static_cast<T>(terms[static_cast<std::size_t>((n * 4 + k) * 2)]); }
    int const pick = best_candidate(r2, K, L);
    if (pick == 3) {
      FUSEKIT_CUDA_TRY(cudaMemsetAsync(W.data_handle() + n * L, 0, row, policy.stream));
    } else if (pick >= 0 && pick != 1) {
      FUSEKIT_CUDA_TRY(
          cudaMemcpyAsync(W.data_handle() + n * L, c.w[pick] + n * L, row, cudaMemcpyDeviceToDevice, policy.stream));
    }
  }
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
}

/// The rule's last word after a refinement (keep_refinement_if_better's, in
/// T): an output whose refinement changed w keeps it only if
/// refinement_wins against w before it (buf.before); else w and its report
/// return to `before` and `reported`. W is device memory.
template <class T, class System>
void gpu_keep_refinement_if_better(const cuda& policy, const System& system, const fit_buffers<T>& buf, matrix<T> W,
                                   const std::vector<output_report>& reported, fit_report& report) {
  std::int64_t const N = W.extent(0), L = W.extent(1);
  std::size_t const bytes = static_cast<std::size_t>(N * L) * sizeof(T);
  std::vector<T> w(static_cast<std::size_t>(N * L)), before(w.size());
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(w.data(), W.data_handle(), bytes, cudaMemcpyDeviceToHost, policy.stream));
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(before.data(), buf.before.get(), bytes, cudaMemcpyDeviceToHost, policy.stream));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
  std::vector<bool> changed(static_cast<std::size_t>(N));
  bool any = false;
  for (std::int64_t n = 0; n < N; ++n) {
    changed[n] = !std::equal(w.begin() + n * L, w.begin() + (n + 1) * L, before.begin() + n * L);
    any = any || changed[n];
  }
  if (!any) { return; }
  residual_candidates<T> const c{{W.data_handle(), buf.before.get(), nullptr, nullptr}, 2};
  std::vector<double> const terms = system.residual_terms(policy, c, N, L, buf.terms.get());
  double const K = terms.back();
  T const factor = static_cast<T>(residual2_rounding_factor<T>(L));
  for (std::int64_t n = 0; n < N; ++n) {
    if (!changed[n]) { continue; }
    auto const at = [&](int k, int which) {
      return static_cast<T>(terms[static_cast<std::size_t>((n * 2 + k) * 2 + which)]);
    };
    if (!refinement_wins(at(0, 0), at(1, 0), at(0, 1) * factor, at(1, 1) * factor, K, L)) {
      FUSEKIT_CUDA_TRY(cudaMemcpyAsync(W.data_handle() + n * L, buf.before.get() + n * L,
                                       static_cast<std::size_t>(L) * sizeof(T), cudaMemcpyDeviceToDevice,
                                       policy.stream));
      report.outputs[static_cast<std::size_t>(n)] = reported[static_cast<std::size_t>(n)];
    }
  }
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(policy.stream));
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
