// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The GPU reduction of values anywhere (detail/reduce/cuda.cuh's entry
/// points call it): device views go straight to `cuda_reduce`; host views are
/// reduced chunk by chunk as the host-data pipeline brings them, each chunk by
/// the same kernels, with the tree's chunks on whole tiles so that its bits
/// are those of one pass; a host result is copied back at the end.

#include <fusekit/detail/reduce/cuda_device.cuh>  // and with it the kernels, the tree, the sources, the checks
#include <fusekit/detail/host_data/cuda_pipeline.cuh>
#include <fusekit/policy.hpp>

#include <cub/device/device_reduce.cuh>
#include <cuda/std/functional>
#include <cuda/std/span>
#include <cuda_runtime.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {
inline namespace reduce {

/// *out = init ⊕ the n values that `make_src(device pointers of the chunk)`
/// reads, with inputs in host memory: reduced chunk by chunk as the pipeline
/// brings them (see the file comment). `out` is device memory.
template <class Acc, class Op, std::size_t I, class MakeSrc>
void cuda_reduce_pipelined(const char* function, const cuda& policy, std::int64_t n, Acc* out,
                           reduce_algorithm algorithm, const Op& op, Acc init,
                           const std::array<pipeline_view, I>& views, const MakeSrc& make_src) {
  cudaStream_t const stream = policy.stream;
  bool const atomic = algorithm == reduce_algorithm::naive_atomic || algorithm == reduce_algorithm::block_atomic;
  // CUB takes an init per pass: the chunks' passes get plus's 0, or min's and max's init again.
  constexpr bool two_passes_fit =
      std::is_same_v<Op, plus> || std::is_same_v<Op, minimum> || std::is_same_v<Op, maximum>;
  Acc const chunk_init = std::is_same_v<Op, plus> ? Acc(0) : init;
  FUSEKIT_EXPECTS(algorithm != reduce_algorithm::cub || two_passes_fit,
                  std::string(function) +
                      ": reduce_algorithm::cub over host memory takes fusekit::plus, minimum "
                      "or maximum (CUB reduces each chunk, then the chunks); use deterministic");
  if (n == 0 || atomic) { launch(store_kernel<Acc>, 1, 1, 0, stream, out, init); }
  if (n == 0) { return; }
  pipeline_view const none{};
  std::int64_t const align = algorithm == reduce_algorithm::deterministic ? tree_tile : pipeline_vector_align;
  std::int64_t const chunk = pipeline_chunk_for(policy, widest_element(views, none), align);
  std::int64_t const chunks = (n + chunk - 1) / chunk;
  // Temporaries: the tree's levels, or CUB's scratch and one result per chunk.
  std::size_t cub_bytes = 0;
  if (algorithm == reduce_algorithm::cub) {
    cub_bytes = std::max(cub_temp_bytes<Acc>(make_src(std::array<const std::byte*, I>{}), op, chunk),
                         cub_temp_bytes<Acc>(array_source<Acc, Acc>{nullptr}, op, chunks));
  }
  std::size_t const partial_at = align_up(cub_bytes);
  std::size_t const temp_bytes = algorithm == reduce_algorithm::deterministic ? tree_temp_bytes<Acc>(n)
                                 : algorithm == reduce_algorithm::cub
                                     ? partial_at + static_cast<std::size_t>(chunks) * sizeof(Acc)
                                     : 0;
  stream_buffer<std::byte> const temp(policy, static_cast<std::int64_t>(temp_bytes));
  std::int64_t const tiles = tree_level_size(n);
  bool const tree = algorithm == reduce_algorithm::deterministic;
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
  if (algorithm == reduce_algorithm::cub) {
    std::size_t bytes = cub_bytes;
    FUSEKIT_CUDA_TRY(
        cub::DeviceReduce::Reduce(temp.get(), bytes, partials, out, chunks, cub_op<Acc>(op), init, stream));
  } else if (tree) {
    cuda_tree_upper_levels(buffers, tiles, op, out, init, stream, device_grids{});
  }
}

/// `cuda_reduce` for inputs and a result anywhere: device views take
/// `cuda_reduce` as they are; host inputs take the pipeline, and a host result
/// is copied to `out` at the end (a pageable one synchronizes). `make_src`
/// makes the source from the inputs' (device) pointers. Workspace calls
/// (`arena`) take device memory only.
template <class Acc, class Op, std::size_t I, class MakeSrc>
void cuda_reduce_anywhere(const char* function, const cuda& policy, std::int64_t n, Acc* out,
                          reduce_algorithm algorithm, const Op& op, Acc init, const std::array<pipeline_view, I>& views,
                          const MakeSrc& make_src, workspace_arena* arena = nullptr) {
  memory_space const out_space = memory_space_of(out);
  FUSEKIT_EXPECTS(arena == nullptr || (out_space == memory_space::device && !any_on_host(views)),
                  std::string(function) +
                      ": a call with a workspace takes device memory only (in and out); "
                      "call the overload without a workspace for host memory");
  on_device<Acc> const result(policy, out, 1, out_space, false);
  route_by_memory(
      views, std::array<memory_space, 0>{},
      [&](const std::array<const std::byte*, I>& in) {
        cuda_reduce(policy, make_src(in), n, result.data, algorithm, op, init, arena);
      },
      [&] { cuda_reduce_pipelined(function, policy, n, result.data, algorithm, op, init, views, make_src); });
  result.write_back();
}

}  // namespace reduce
}  // namespace detail
}  // namespace fusekit
