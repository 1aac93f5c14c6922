// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `captured_graph`: work recorded once as a CUDA graph and replayed, for loops
/// of many small launches (the trainer's cuBLAS path).

#include <fusekit/detail/core/unique_owner.hpp>
#include <fusekit/error.hpp>

#include <cuda_runtime.h>

namespace fusekit {
namespace detail {
inline namespace core {

/// A CUDA graph captured once and launched many times; destroyed on scope exit.
class captured_graph : unique_owner {
 public:
  ~captured_graph() {
    if (exec_ != nullptr) { FUSEKIT_CUDA_TRY_NO_THROW(cudaGraphExecDestroy(exec_)); }
  }

  [[nodiscard]] bool empty() const { return exec_ == nullptr; }

  /// Records what `enqueue(stream)` issues, on a stream of its own (the caller's
  /// may be the legacy default stream, which cannot be captured).
  template <class Enqueue>
  void capture(Enqueue enqueue) {
    cudaStream_t side = nullptr;
    FUSEKIT_CUDA_TRY(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaGraph_t graph = nullptr;
    try {
      FUSEKIT_CUDA_TRY(cudaStreamBeginCapture(side, cudaStreamCaptureModeThreadLocal));
      try {
        enqueue(side);
      } catch (...) {
        if (cudaStreamEndCapture(side, &graph) != cudaSuccess) { (void)cudaGetLastError(); }
        throw;
      }
      FUSEKIT_CUDA_TRY(cudaStreamEndCapture(side, &graph));
      FUSEKIT_CUDA_TRY(cudaGraphInstantiate(&exec_, graph, 0));
    } catch (...) {
      if (graph != nullptr) { FUSEKIT_CUDA_TRY_NO_THROW(cudaGraphDestroy(graph)); }
      FUSEKIT_CUDA_TRY_NO_THROW(cudaStreamDestroy(side));
      throw;
    }
    FUSEKIT_CUDA_TRY_NO_THROW(cudaGraphDestroy(graph));
    FUSEKIT_CUDA_TRY_NO_THROW(cudaStreamDestroy(side));
  }

  void launch(cudaStream_t stream) const { FUSEKIT_CUDA_TRY(cudaGraphLaunch(exec_, stream)); }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace core
}  // namespace detail
}  // namespace fusekit
