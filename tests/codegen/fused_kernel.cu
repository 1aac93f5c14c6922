// SPDX-License-Identifier: Apache-2.0
// Compiled to PTX and to an sm_90 cubin by check_ptx.cmake: the fused hidden
// layer over float inputs must use 16-byte global loads and stores and keep
// everything in registers (no local memory, no spills).
#include <fusekit/fusekit.cuh>

void fused_float_layer(::cuda::std::span<const float> grey, ::cuda::std::span<const float> w,
                       ::cuda::std::span<float> out) {
  fusekit::hidden_layer(fusekit::cuda{}, grey, w, out);
}

void fused_uint8_layer(::cuda::std::span<const unsigned char> grey, ::cuda::std::span<const float> w,
                       ::cuda::std::span<float> out) {
  fusekit::hidden_layer(fusekit::cuda{}, grey, w, out);
}
