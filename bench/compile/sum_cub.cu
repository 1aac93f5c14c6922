// SPDX-License-Identifier: Apache-2.0
// Compile-cost probe (bench/compile/measure.sh): the same sum written with
// cub::DeviceReduce::Sum, temporary storage and the copy back included.
#include <cub/device/device_reduce.cuh>

#include <cuda_runtime.h>

#include <cstddef>

float sum_of(cudaStream_t stream, const float* x, int n) {
  std::size_t bytes = 0;
  float* out = nullptr;
  cub::DeviceReduce::Sum(nullptr, bytes, x, out, n, stream);
  void* temp = nullptr;
  cudaMallocAsync(&temp, bytes + sizeof(float), stream);
  out = static_cast<float*>(temp);
  cub::DeviceReduce::Sum(static_cast<char*>(temp) + 256, bytes, x, out, n, stream);
  float s = 0.0f;
  cudaMemcpyAsync(&s, out, sizeof s, cudaMemcpyDeviceToHost, stream);
  cudaStreamSynchronize(stream);
  cudaFreeAsync(temp, stream);
  return s;
}
