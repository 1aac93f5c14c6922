// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `fit` and `predict` with both backends (include from nvcc and link
/// `fusekit::train`, which adds cuBLAS), and the entry points only the GPU has:
/// a `fit` whose temporaries come from a caller's workspace.
///
///     std::size_t bytes = fusekit::fit_workspace_bytes<float>(K, L, N, options);
///     // ... bytes of device memory in `ws`, allocated once ...
///     fusekit::fit_report r = fusekit::fit(fusekit::cuda{stream}, X, Y, W, options, ws);

#include <fusekit/detail/train/cuda.cuh>
#include <fusekit/train.hpp>

#include <cuda/std/span>

#include <cstddef>
#include <cstdint>

namespace fusekit {

/// Bytes of device workspace `fit` needs for X of K × L, N outputs and these
/// options, whichever GPU path it takes, cuBLAS's workspace included
/// (`train_tuning::cublas_workspace_bytes`: pass the policy's tuning when it
/// changes that; the default is enough on every device). Asks no device.
template <class T>
std::size_t fit_workspace_bytes(std::int64_t K, std::int64_t L, std::int64_t N, const gd_options& options = {},
                                const tuning& t = tuning{}) {
  detail::check_train_type<T>();
  return detail::fit_workspace_bytes_for<T>(K, L, N, options, t);
}

/// `fit` on the GPU allocating nothing through the policy's resource: every
/// temporary comes from `workspace` (at least `fit_workspace_bytes<T>(K, L, N,
/// options)` bytes of device memory, sharing no byte with X, Y or W), cuBLAS's
/// workspace too (set on the handle after every bind to a stream), so the call
/// can be captured in a CUDA graph. It fits the data as given: no extras, and
/// no rescaling of columns in extreme units (the other `fit`s take both).
template <class T>
fit_report fit(const cuda& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& options,
               ::cuda::std::span<std::byte> workspace) {
  return detail::cuda_fit(policy, X, Y, W, options, workspace);
}

}  // namespace fusekit
