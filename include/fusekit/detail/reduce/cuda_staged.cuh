// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The reductions on `fusekit::cuda_staged` (staged: views anywhere). Device views take
/// `cuda_reduce` as they are; inputs in host memory go through the host-data
/// pipeline (detail/host_data/cuda_pipeline.cuh) in chunks, each reduced on
/// arrival by the same kernels: `deterministic` chunks hold whole tiles of the
/// tree, so its first level is the same, tile for tile, and the result has the
/// same bits as over device memory; the atomics add each chunk into the
/// result; `run_to_run` reduces each chunk with CUB, then the chunk results
/// with CUB (for plus, minimum and maximum, whose init may be applied twice).
/// A result in host memory is copied there at the end.

#include <fusekit/detail/reduce/cuda.cuh>
#include <fusekit/detail/reduce/reduction.hpp>
#include <fusekit/detail/host_data/cuda_pipeline.cuh>
#include <fusekit/detail/host_data/router.hpp>
#include <fusekit/policy.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <tuple>

namespace fusekit {
namespace detail {

// This file is fusekit::cuda_staged's backend of the reductions (see detail/core/dispatch.hpp).
template <>
struct backend_available<reduce_tag, cuda_staged> : std::true_type {};

inline namespace reduce {

/// *out = init ⊕ the n values that `make_src(device pointers of the chunk)`
/// reads, with inputs in host memory: reduced chunk by chunk as the pipeline
/// brings them (see the file comment). `out` is device memory.
template <class Acc, class Op, class A, std::size_t I, class MakeSrc>
void cuda_reduce_pipelined(const char* function, const cuda& policy, std::int64_t n, Acc* out, A algorithm,
                           const Op& op, Acc init, const std::array<pipeline_view, I>& views, const MakeSrc& make_src) {
  cudaStream_t const stream = policy.stream;
  constexpr bool atomic = is_atomic_algorithm_v<A>;
  constexpr bool cub = std::is_same_v<A, run_to_run>;
  constexpr bool tree = std::is_same_v<A, deterministic>;
  // CUB takes an init per pass: the chunks' passes get plus's 0, or min's and max's init again.
  constexpr bool two_passes_fit =
      std::is_same_v<Op, plus> || std::is_same_v<Op, minimum> || std::is_same_v<Op, maximum>;
  Acc const chunk_init = std::is_same_v<Op, plus> ? Acc(0) : init;
  FUSEKIT_EXPECTS(!cub || two_passes_fit, std::string(function) +
                                              ": run_to_run over host memory takes fusekit::plus, minimum or "
                                              "maximum (CUB reduces each chunk, then the chunks); use deterministic");
  if (n == 0 || atomic) { launch(store_kernel<Acc>, 1, 1, 0, stream, out, init); }
  if (n == 0) { return; }
  pipeline_view const none{};
  std::int64_t const align = tree ? tree_tile : pipeline_vector_align;
  std::int64_t const chunk = pipeline_chunk_for(policy, widest_element(views, none), align);
  std::int64_t const chunks = (n + chunk - 1) / chunk;
  // Temporaries: the tree's levels, or CUB's scratch and one result per chunk.
  std::size_t cub_bytes = 0;
  if constexpr (cub) {
    cub_bytes = std::max(
        device_reduce_pass<A>::template temp_bytes<Acc>(make_src(std::array<const std::byte*, I>{}), op, chunk),
        device_reduce_pass<A>::template temp_bytes<Acc>(array_source<Acc, Acc>{nullptr}, op, chunks));
  }
  std::size_t const partial_at = align_up(cub_bytes);
  std::size_t const temp_bytes = tree  ? tree_temp_bytes<Acc>(n)
                                 : cub ? partial_at + static_cast<std::size_t>(chunks) * sizeof(Acc)
                                       : 0;
  stream_buffer<std::byte> const temp(policy, static_cast<std::int64_t>(temp_bytes));
  std::int64_t const tiles = tree_level_size(n);
  std::array<Acc*, 2> const buffers = tree_level_buffers<Acc>(tree ? temp.get() : nullptr, tiles);
  Acc* const partials = reinterpret_cast<Acc*>(temp.get() + partial_at);

  run_pipeline(policy, n, align, views, none,
               [&](cudaStream_t s, std::int64_t c, std::int64_t begin, std::int64_t count,
                   const std::array<const std::byte*, I>& in, std::byte*) {
                 // Chunks start on tiles, so this chunk's first-level partials start at tile begin / 8192.
                 Acc* const tree_out = tiles == 1 ? out : (tree ? buffers[0] + begin / tree_tile : nullptr);
                 reduce_first_pass(policy, s, make_src(in), count, algorithm, op, init,
                                   first_pass_targets<Acc>{out, partials + c, chunk_init, temp.get(), cub_bytes,
                                                           tree_out, tiles == 1},
                                   device_grids{});
               });
  if constexpr (cub) {
    device_reduce_pass<A>::run(temp.get(), cub_bytes, array_source<Acc, Acc>{partials}, out, chunks, op, init, stream);
  } else if constexpr (tree) {
    cuda_tree_upper_levels(buffers, tiles, op, out, init, stream, device_grids{});
  }
}

/// The pipeline's views of a source's arrays, each classified where it lives.
template <class Src>
auto source_views(const Src& src) {
  auto const arrays = source_arrays(src);
  auto const bytes = source_element_bytes(src);
  std::array<pipeline_view, std::tuple_size_v<decltype(arrays)>> views{};
  for (std::size_t i = 0; i < views.size(); ++i) { views[i] = {arrays[i], bytes[i], memory_space_of(arrays[i])}; }
  return views;
}

/// `cuda_reduce` for inputs and a result anywhere: device views take
/// `cuda_reduce` as they are; host inputs take the pipeline, and a host result
/// is copied to `out` at the end (a pageable one synchronizes).
template <class Acc, class Src, class Op, class A>
void cuda_reduce_anywhere(const char* function, const cuda& policy, const Src& src, std::int64_t n, Acc* out,
                          A algorithm, const Op& op, Acc init) {
  auto const views = source_views(src);
  on_device<Acc> const result(policy, out, 1, memory_space_of(out), false);
  using pointers = std::array<const std::byte*, std::tuple_size_v<decltype(views)>>;
  auto const make_src = [&src](const pointers& p) { return source_over(src, p); };
  route_by_memory(
      views, std::array<memory_space, 0>{},
      [&](const pointers& in) { cuda_reduce(policy, make_src(in), n, result.data, algorithm, op, init); },
      [&] { cuda_reduce_pipelined(function, policy, n, result.data, algorithm, op, init, views, make_src); });
  result.write_back();
}

/// `fusekit::cuda_staged`'s route, which the GPU's reduction hook
/// (`run_reduce`, detail/reduce/cuda.cuh) takes for that policy: views
/// anywhere. (The workspace forms take `const cuda&`: device memory.)
template <class R, class A>
auto staged_reduce(reduce_tag, const cuda_staged& policy, const R& r, A algorithm) {
  using Acc = typename R::accumulator;
  std::int64_t const n = check_reduction(r, algorithm);
  auto const into = [&](Acc* out) { cuda_reduce_anywhere(r.function, policy, r.src, n, out, algorithm, r.op, r.init); };
  if constexpr (R::returns_value) {
    return device_scalar_result<Acc>(policy, into);
  } else {
    into(r.out);
  }
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
