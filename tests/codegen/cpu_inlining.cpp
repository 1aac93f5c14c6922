// SPDX-License-Identifier: Apache-2.0
// Compiled as an object file and inspected by check_inlined.cmake: every
// elementwise functor must be inlined into the CPU loops (a call left in a loop
// stops vectorization: about 10x slower), also in a translation unit that
// instantiates many of them. No out-of-line tanh_float, and no out-of-line
// kernel of the activations computed in double, may be emitted.
#include <fusekit/fusekit.hpp>

#include <cstdint>

using ::cuda::std::span;

void layers(span<const std::uint8_t> g8, span<const float> g, span<const __half> gh, span<const float> w,
            span<float> out) {
  fusekit::hidden_layer(fusekit::cpu{}, g8, w, out);
  fusekit::hidden_layer(fusekit::cpu{}, g, w, out);
  fusekit::hidden_layer(fusekit::cpu{}, gh, w, out);
  fusekit::hidden_layer_unfused(fusekit::cpu{}, g8, w, out);
  fusekit::hidden_layer_unfused(fusekit::cpu{}, g, w, out);
  fusekit::transform(fusekit::cpu{}, out, fusekit::tanh_activate{}, g);
  fusekit::transform(fusekit::cpu{}, out, fusekit::fast_tanh_activate{}, g);
  fusekit::transform(fusekit::cpu{}, out, fusekit::fuse(fusekit::weigh{}, fusekit::tanh_activate{}), g, w);
  fusekit::transform(fusekit::cpu{}, out, fusekit::sigmoid{}, g);
  fusekit::transform(fusekit::cpu{}, out, fusekit::fuse(fusekit::weigh{}, fusekit::gelu_tanh{}), g, w);
  fusekit::transform(fusekit::cpu{}, out, fusekit::fuse(fusekit::weigh{}, fusekit::gelu_erf{}), g, w);
  fusekit::transform(fusekit::cpu{}, out, fusekit::fuse(fusekit::silu{}, fusekit::softplus{}, fusekit::relu{}), g);
}

double sums(span<const std::uint8_t> g8, span<const float> w) {
  return fusekit::transform_reduce(fusekit::cpu{}, fusekit::make_hidden_layer(), g8, w) +
         fusekit::transform_reduce(fusekit::cpu{}, fusekit::reduce_algorithm::block_atomic,
                                   fusekit::accumulate_in<double>{}, fusekit::make_hidden_layer(), g8, w);
}
