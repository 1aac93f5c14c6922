// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The pipeline's plan, the schedule that moves host-resident data through the GPU: plain C++, so
/// the CPU tests can check it for every size and alignment; the driver
/// (detail/host_data/cuda_pipeline.cuh) only walks it.
///
/// n elements are cut into chunks of `chunk` elements (a multiple of `align`,
/// so that every chunk but the last starts and ends on a tile of the
/// deterministic tree). Chunk i uses slot i mod depth of each staging buffer.
/// Per chunk, in the order the driver issues them:
///
///   stage_in   host thread:     pageable inputs → pinned slot      (only if some input is pageable)
///   upload     upload stream:   pinned inputs  → device slot        (only if some input is on the host)
///   compute    caller's stream: kernel on the device slot, or on device views directly
///   download   download stream: device out slot → pinned out slot, or the caller's pinned output
///   stage_out  host thread:     pinned out slot → pageable output   (only if the output is pageable)
///
/// Each op lists the earlier ops it waits for (`after`): the op of the same
/// chunk before it, and the op of chunk i − depth that last read the slot it
/// writes. Ops of one queue also run in issue order. Dependencies always point
/// to ops issued earlier, so a host op never waits for an op not yet issued.
/// `stage_out` of chunk i is issued after the download of chunk i + depth − 1
/// (or at the end), so that the host copies out while later chunks move.

#include <fusekit/config.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace host_data {

enum class pipeline_op_kind : std::uint8_t { stage_in, upload, compute, download, stage_out };

/// Where an op runs: the host thread, or one of three streams.
enum class pipeline_queue : std::uint8_t { host, upload, compute, download };

constexpr pipeline_queue queue_of(pipeline_op_kind k) {
  switch (k) {
    case pipeline_op_kind::upload:
      return pipeline_queue::upload;
    case pipeline_op_kind::compute:
      return pipeline_queue::compute;
    case pipeline_op_kind::download:
      return pipeline_queue::download;
    default:
      return pipeline_queue::host;
  }
}

struct pipeline_op {
  pipeline_op_kind kind = pipeline_op_kind::compute;
  std::int64_t chunk = 0;                     ///< index of the chunk
  std::int64_t begin = 0;                     ///< its first element
  std::int64_t count = 0;                     ///< its elements
  int slot = 0;                               ///< staging slot: chunk mod depth
  std::array<std::int64_t, 2> after{-1, -1};  ///< indices of earlier ops to wait for; −1: none
};

/// What moves: n elements in chunks of about `chunk` (rounded down to a
/// multiple of `align`, at least `align`), `depth` ≥ 1 slots per staging
/// buffer, and which copies the memory kinds of the views need.
struct pipeline_shape {
  std::int64_t n = 0;
  std::int64_t chunk = 1;
  std::int64_t align = 1;
  int depth = 2;
  bool stage_in = false;   ///< some input is pageable host memory
  bool upload = false;     ///< some input is host memory (pinned or pageable)
  bool download = false;   ///< the output is host memory
  bool stage_out = false;  ///< the output is pageable host memory
};

/// Elements per chunk: `chunk` rounded down to a multiple of `align`, at least `align`.
constexpr std::int64_t pipeline_chunk(std::int64_t chunk, std::int64_t align) {
  std::int64_t const a = align > 0 ? align : 1;
  std::int64_t const c = chunk / a * a;
  return c > 0 ? c : a;
}

/// The staging a pipeline needs per view: `slots` slots of `elements` elements.
struct pipeline_staging {
  int slots = 0;
  std::int64_t elements = 0;
};

/// slots = min(depth, chunks) and elements = min(chunk, n): chunk c uses slot
/// c mod depth, so a call of fewer chunks than the depth touches only its
/// first slots, and no chunk is longer than the call. (A 2^20-element call
/// with chunks of 2^20 stages one chunk, not depth of them.)
constexpr pipeline_staging staging_for(const pipeline_shape& s) {
  if (s.n <= 0) { return {}; }
  std::int64_t const chunk = pipeline_chunk(s.chunk, s.align);
  std::int64_t const chunks = (s.n + chunk - 1) / chunk;
  std::int64_t const depth = s.depth > 0 ? s.depth : 1;
  return {static_cast<int>(chunks < depth ? chunks : depth), s.n < chunk ? s.n : chunk};
}

/// The ops of a pipeline, in the order the driver issues them.
inline std::vector<pipeline_op> plan_pipeline(const pipeline_shape& s) {
  std::vector<pipeline_op> ops;
  if (s.n <= 0) { return ops; }
  std::int64_t const chunk = pipeline_chunk(s.chunk, s.align);
  std::int64_t const chunks = (s.n + chunk - 1) / chunk;
  int const depth = s.depth > 0 ? s.depth : 1;
  bool const upload = s.upload || s.stage_in;
  bool const download = s.download || s.stage_out;
  // Index of each chunk's ops, −1 where the op is absent.
  std::vector<std::array<std::int64_t, 5>> index(static_cast<std::size_t>(chunks), {-1, -1, -1, -1, -1});
  auto const at = [&](std::int64_t c, pipeline_op_kind k) -> std::int64_t {
    return c < 0 ? -1 : index[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)];
  };
  auto const add = [&](pipeline_op_kind k, std::int64_t c, std::int64_t a, std::int64_t b) {
    std::int64_t const begin = c * chunk;
    std::int64_t const count = s.n - begin < chunk ? s.n - begin : chunk;
    index[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)] = static_cast<std::int64_t>(ops.size());
    ops.push_back(pipeline_op{k, c, begin, count, static_cast<int>(c % depth), {a, b}});
  };
  auto const stage_out = [&](std::int64_t c) {
    add(pipeline_op_kind::stage_out, c, at(c, pipeline_op_kind::download), -1);
  };
  for (std::int64_t c = 0; c < chunks; ++c) {
    std::int64_t const prev = c - depth;  // the chunk that used this slot last
    if (s.stage_in) { add(pipeline_op_kind::stage_in, c, at(prev, pipeline_op_kind::upload), -1); }
    if (upload) {
      add(pipeline_op_kind::upload, c, at(c, pipeline_op_kind::stage_in), at(prev, pipeline_op_kind::compute));
    }
    add(pipeline_op_kind::compute, c, at(c, pipeline_op_kind::upload),
        download ? at(prev, pipeline_op_kind::download) : -1);
    if (download) {
      add(pipeline_op_kind::download, c, at(c, pipeline_op_kind::compute),
          s.stage_out ? at(prev, pipeline_op_kind::stage_out) : -1);
    }
    if (s.stage_out && c - (depth - 1) >= 0) { stage_out(c - (depth - 1)); }
  }
  if (s.stage_out) {
    for (std::int64_t c = chunks - (depth - 1) < 0 ? 0 : chunks - (depth - 1); c < chunks; ++c) { stage_out(c); }
  }
  return ops;
}

}  // namespace host_data
}  // namespace detail
}  // namespace fusekit
