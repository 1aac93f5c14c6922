// SPDX-License-Identifier: Apache-2.0
// Built by nvcc against fusekit: the GPU path when a device is present, else the CPU one.
#include <fusekit/fusekit.cuh>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  std::vector<float> x = {-20.0f, -0.5f, 0.0f, 0.25f, 3.0f};
  std::vector<float> y(x.size());
  if (fusekit::has_cuda_device()) {
    float* d = nullptr;
    FUSEKIT_CUDA_TRY(cudaMalloc(&d, x.size() * sizeof(float)));
    FUSEKIT_CUDA_TRY(cudaMemcpy(d, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
    fusekit::transform(fusekit::cuda{}, ::cuda::std::span<float>(d, x.size()), fusekit::tanh_activate{},
                       ::cuda::std::span<const float>(d, x.size()));
    FUSEKIT_CUDA_TRY(cudaMemcpy(y.data(), d, x.size() * sizeof(float), cudaMemcpyDeviceToHost));
    FUSEKIT_CUDA_TRY(cudaFree(d));
  } else {
    fusekit::transform(fusekit::cpu{}, ::cuda::std::span<float>(y), fusekit::tanh_activate{},
                       ::cuda::std::span<const float>(x));
  }
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::fabs(y[i] - std::tanh(x[i])) > 1e-6) {
      std::printf("mismatch at %zu\n", i);
      return 1;
    }
  }
  std::printf("cuda consumer ok\n");
  return 0;
}
