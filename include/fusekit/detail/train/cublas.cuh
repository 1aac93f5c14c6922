// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// cuBLAS for the trainer's GPU backend: checked calls, one cached handle per
/// device and host thread, and a row-major-friendly GEMM in T.

#include <fusekit/detail/core/unique_owner.hpp>
#include <fusekit/error.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <type_traits>
#include <utility>
#include <vector>

/// Throws `fusekit::cuda_error` naming the cuBLAS status when `call` fails.
#define FUSEKIT_CUBLAS_TRY(call)                                                                             \
  do {                                                                                                       \
    cublasStatus_t const fusekit_cublas_status_ = (call);                                                    \
    if (fusekit_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                                   \
      throw ::fusekit::cuda_error("cuBLAS", static_cast<int>(fusekit_cublas_status_),                        \
                                  cublasGetStatusName(fusekit_cublas_status_),                               \
                                  cublasGetStatusString(fusekit_cublas_status_), #call, __FILE__, __LINE__); \
    }                                                                                                        \
  } while (0)

namespace fusekit {
namespace detail {
inline namespace train {

/// The handles of one host thread, one per device, destroyed when the thread
/// exits (for the main thread: at exit, before the CUDA runtime tears down).
/// A destructor cannot throw, so a failed destroy is reported on stderr.
class cublas_handles : unique_owner {
 public:
  ~cublas_handles() {
    for (auto const& [device, handle] : handles_) {
      if (cudaSetDevice(device) != cudaSuccess) { (void)cudaGetLastError(); }
      cublasStatus_t const status = cublasDestroy(handle);
      if (status != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "fusekit: cublasDestroy for device %d failed: %s\n", device, cublasGetStatusName(status));
      }
    }
  }

  /// The handle for `device`, created on first use (with `device` current).
  cublasHandle_t get(int device) {
    for (auto const& [d, handle] : handles_) {
      if (d == device) { return handle; }
    }
    cublasHandle_t handle = nullptr;
    FUSEKIT_CUBLAS_TRY(cublasCreate(&handle));
    handles_.emplace_back(device, handle);
    return handle;
  }

 private:
  std::vector<std::pair<int, cublasHandle_t>> handles_;
};

/// The calling thread's cuBLAS handle for the current device. cublasCreate
/// allocates and cublasDestroy synchronizes the device, so neither runs per
/// call: the handle lives as long as the thread. Bind it before use (`cublas_context::on`).
inline cublasHandle_t cublas_handle() {
  thread_local cublas_handles handles;
  int device = 0;
  FUSEKIT_CUDA_TRY(cudaGetDevice(&device));
  return handles.get(device);
}

/// A call's cuBLAS: the cached handle and the workspace the call gives it.
///
/// `cublasSetStream` puts a handle back on cuBLAS's own workspace, which
/// cuBLAS (12.2 and later) takes with cudaMallocAsync, outside the policy's
/// resource, and which becomes allocation nodes when a stream is being
/// captured. So every bind to a stream sets the call's workspace again, and
/// no cuBLAS routine of fusekit's runs on a handle bound any other way.
struct cublas_context {
  cublasHandle_t handle = nullptr;
  void* workspace = nullptr;  ///< device memory, 256-byte aligned; null with 0 bytes
  std::size_t workspace_bytes = 0;

  /// The handle, bound to `stream` with this workspace.
  cublasHandle_t on(cudaStream_t stream) const {
    FUSEKIT_CUBLAS_TRY(cublasSetStream(handle, stream));
    FUSEKIT_CUBLAS_TRY(cublasSetWorkspace(handle, workspace, workspace_bytes));
    return handle;
  }
};

/// Column-major C = alpha·op(A)·op(B) + beta·C in T (float or double). A row-major
/// r × c matrix is the column-major c × r matrix, its transpose.
template <class T>
void gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m, std::int64_t n, std::int64_t k,
          T alpha, const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
  if constexpr (std::is_same_v<T, double>) {
    FUSEKIT_CUBLAS_TRY(cublasDgemm_64(h, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
  } else {
    FUSEKIT_CUBLAS_TRY(cublasSgemm_64(h, ta, tb, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
  }
}

}  // namespace train
}  // namespace detail
}  // namespace fusekit
