// SPDX-License-Identifier: Apache-2.0
// Built by g++ alone against fusekit: the CPU backend of the hidden layer.
#include <fusekit/fusekit.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  std::vector<unsigned char> grey = {0, 51, 128, 254};
  std::vector<float> w = {0.5f, 0.5f, 1.0f, 2.0f};
  std::vector<float> out(grey.size());
  fusekit::hidden_layer(fusekit::cpu{}, ::cuda::std::span<const unsigned char>(grey), ::cuda::std::span<const float>(w),
                        ::cuda::std::span<float>(out));
  for (std::size_t i = 0; i < out.size(); ++i) {
    double const ref = std::tanh(grey[i] / 255.0 * w[i]);
    if (std::fabs(out[i] - ref) > 1e-6) {
      std::printf("mismatch at %zu: %g vs %g\n", i, out[i], ref);
      return 1;
    }
  }
  std::printf("consumer ok (fusekit %d)\n", FUSEKIT_VERSION);
  return 0;
}
