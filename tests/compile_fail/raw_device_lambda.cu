// SPDX-License-Identifier: Apache-2.0
// A raw __device__ lambda as a stage of fuse: the host cannot call it to learn
// its arity, and the message says to wrap it in fusekit::unary or binary.
#include <fusekit/fusekit.cuh>

void layer(::cuda::std::span<float> out, ::cuda::std::span<const float> in) {
  auto relu = fusekit::fuse(fusekit::weigh{}, [] __device__(float x) { return x > 0.f ? x : 0.f; });
  fusekit::transform(fusekit::cuda{}, out, relu, in, in);
}
