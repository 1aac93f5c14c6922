// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Launch tuning of the GPU backend, in one place per algorithm (in the manner
/// of CUB's `tuning_reduce.cuh`): a struct per algorithm, a table selected by
/// compute capability, and a caller's override carried by the policy:
///
///     fusekit::tuning t = fusekit::tuning_for(9, 0);
///     t.train.batch_iterations = 16;
///     fusekit::fit(fusekit::cuda{stream}.with(t), X, Y, W);
///
/// What is NOT here, on purpose: the constants that define the deterministic
/// tree's bits (8192-value tiles of 256 lanes × 32, detail/reduce/tree.hpp) are
/// fixed, because changing them changes every deterministic sum; and the
/// `block_atomic` kernel's 1024 threads are part of its type (cub::BlockReduce
/// and __launch_bounds__ take them at compile time).

#include <cstdint>

namespace fusekit {

/// `transform`, `hidden_layer`, `predict` and the `naive_atomic` sum: grid-stride kernels.
struct elementwise_tuning {
  /// Threads per block. 256 = 8 warps: the block size the CUDA Best Practices
  /// Guide recommends as a start (a multiple of 32, 128–256). Why it stays:
  /// the kernels are grid-stride loops over memory-bound elementwise work, so
  /// any block of 128–1024 threads that keeps several blocks resident per
  /// multiprocessor reaches the same bandwidth, and 256 leaves the register
  /// file room for the fused layer's wider uint8 path. No GPU sweep has been
  /// measured yet; a per-architecture value belongs in `tuning_for` only
  /// from one (docs/gpu-check.md).
  int block_threads = 256;
};

/// The trainer's GPU paths.
struct train_tuning {
  /// Most threads per output in the iteration kernels: a warp per 32 unknowns
  /// up to this cap. Past 8 warps each block sum (two per step) waits on more
  /// warps while the L ≤ ~230 unknowns of the single-launch path give each
  /// thread one or two of them.
  int max_block_threads = 256;
  /// Most threads of the power iteration's one block: it runs once per fit, on
  /// the whole device, so it takes the largest block.
  int power_iteration_max_threads = 1024;
  /// Steps of the cuBLAS path between two reads of how many outputs still run.
  /// Each read synchronizes the host; after convergence at most this many − 1
  /// steps run for nothing (a stopped output's step returns at once).
  std::int64_t batch_iterations = 64;
  /// Bytes of device memory a fit gives cuBLAS as its workspace
  /// (cublasSetWorkspace), from the policy's resource or the fit's workspace.
  /// cuBLAS's documentation recommends 32 MiB on Hopper (sm_90) and 4 MiB on
  /// earlier GPUs; the default is the larger, so that `fit_workspace_bytes`,
  /// which asks no device, is enough everywhere. `tuning_for` gives 4 MiB below
  /// sm_90. 0 passes no workspace.
  std::int64_t cublas_workspace_bytes = std::int64_t{32} << 20;
};

/// The pipeline that moves host-resident data through the GPU (every algorithm
/// given host memory with `fusekit::cuda`; detail/host_data/cuda_pipeline.cuh).
struct pipeline_tuning {
  /// Bytes of the widest view per chunk. A copy of 4 MiB takes ~80 µs at the
  /// ~50 GB/s of PCIe 5.0 x16, so the ~5 µs that an op costs to issue and
  /// order stay a few percent of it, while a 2^20-element call still splits
  /// into chunks that overlap. Rounded down to the deterministic tree's 8192
  /// values for sums.
  std::int64_t chunk_bytes = std::int64_t{4} << 20;
  /// Slots per staging buffer: chunks in flight at once. Three keep an upload,
  /// a kernel and a download running at the same time; one more lets the host
  /// copy of pageable data run ahead.
  int depth = 4;
  /// Threads that copy pageable memory into and out of the pinned slots (the
  /// calling thread and helpers fusekit starts once and reuses), at least
  /// 1 MiB each. 0: half the processors, at most 4 (one core moves pageable
  /// memory at about a third of the bus's rate).
  int host_copy_threads = 0;
  /// Chunks of elementwise work (and of every sum but the tree's, whose chunks
  /// are whole tiles) start on multiples of this many elements, so that each
  /// chunk keeps the vector alignment of a whole view. Fixed: the vector width
  /// of the kernels is.
  static constexpr std::int64_t vector_align = 64;
};

/// The reduction kernels' launch shapes. They are template arguments of the
/// kernels (`__launch_bounds__`, `cub::BlockReduce`'s block size), so they are
/// fixed when the kernels compile, as in CUB's agent policies, and not a field
/// of a call's tuning. The deterministic tree's shape (256 lanes of 32 values,
/// detail/reduce/tree.hpp) is not a tuning at all: it defines the tree's bits,
/// and it never changes.
struct reduce_launch {
  /// Threads of a `block_atomic` block: large blocks keep the atomics few, and
  /// their rounding, in an order that changes from run to run, dominates the
  /// error of a float sum.
  static constexpr int block_atomic_threads = 1024;
  /// Blocks of the tree kernel that fit on a multiprocessor at once, at least:
  /// a cap of 65536 / (256 · 4) = 64 registers per thread (checked for every
  /// instantiation by tests/codegen/check_tree_ptx.cmake).
  /// Within that cap each thread has a lane's 32 rows in flight at once for
  /// elements of at most 4 bytes (128 bytes of float or int32, widened to
  /// double or int64 only as they are added; 32 bytes of uint8), and 24 of
  /// them for 8-byte elements (192 bytes): nvcc hoists the loads over the
  /// adds (codegen.tree_loads_in_flight reads them from the SASS).
  static constexpr int tree_min_blocks_per_sm = 4;
};

/// The CPU backend's streaming loops (`transform` and `hidden_layer` with
/// `fusekit::cpu`, and the deterministic tree's column pass): fixed constants,
/// each chosen by measurement (docs/performance.md, "Measurements behind the
/// code"). Past the caches a loop
/// is as fast as the memory only when its loads are in flight early enough;
/// the fused layer's arithmetic fills the core's reorder window, so the loops
/// read their inputs ahead themselves. (None of this changes a result bit.)
struct cpu_stream_tuning {
  /// Elements per block of the SIMD loop; before each block the lines of
  /// every input `prefetch_ahead_bytes` further on are prefetched.
  static constexpr std::int64_t block = 64;
  /// How far ahead of the loop each input is prefetched, in bytes (2 KiB: a
  /// few hundred nanoseconds of the layer's work, well inside the L1 cache).
  static constexpr std::int64_t prefetch_ahead_bytes = 2048;
  /// How far ahead the deterministic tree's row-by-row column pass also
  /// prefetches its input into L2 (8 KiB: two 4 KiB pages on, where the
  /// hardware's stream prefetchers, which stop at page boundaries, have not
  /// yet gone; the near prefetch then finds the lines in L2).
  static constexpr std::int64_t prefetch_far_bytes = 8192;
  /// Calls that read and write fewer bytes than this in all (about the L2
  /// caches of two cores) run the plain loop: their data is in cache.
  static constexpr std::int64_t prefetch_from_bytes = std::int64_t{1} << 20;
  /// Calls of `transform` that write at least this many bytes store them
  /// past the caches (non-temporal stores, detail/core/stream_store.hpp): an
  /// output this large does not stay in a last-level cache beside its inputs
  /// (32 MiB: a Zen 3 core complex's L3), and a plain store would first read
  /// every line it writes (below the threshold the two stores were level).
  static constexpr std::int64_t stream_stores_from_bytes = std::int64_t{32} << 20;
};

/// The CPU backend's threads (detail/core/cpu_pool.hpp): each loop is cut into
/// chunks that the calling thread and the pool's running helpers claim one at
/// a time, and helpers are woken only for a loop whose work reaches its
/// `*_parallel_from`: below it the caller finishes before a woken helper can
/// take a chunk (a helper's wake-up costs tens of microseconds on a quiet
/// machine, and a loaded one may not run it at all). Chunk sizes are functions
/// of the loop's size alone, never of the thread count, so results built from
/// per-chunk parts have the same bits for every `cpu{N}`. Chosen by the
/// crossover sweep in docs/performance.md, "Under load".
struct cpu_thread_tuning {
  /// `transform` and `hidden_layer`: elements per chunk (64 KiB of float
  /// output), and the elements from which helpers join.
  static constexpr std::int64_t transform_grain = std::int64_t{1} << 14;
  static constexpr std::int64_t transform_parallel_from = std::int64_t{1} << 15;
  /// The `run_to_run` CPU sum: blocks of 4096 values per chunk, and the values from which helpers join.
  static constexpr std::int64_t sum_grain_blocks = 8;
  static constexpr std::int64_t sum_parallel_from = std::int64_t{1} << 17;
  /// The deterministic tree: 8192-value tiles per chunk, and the values from which helpers join.
  static constexpr std::int64_t tree_grain_tiles = 4;
  static constexpr std::int64_t tree_parallel_from = std::int64_t{1} << 17;
  /// The atomics and the reductions by other ops: values per chunk, and from which helpers join.
  static constexpr std::int64_t values_grain = std::int64_t{1} << 15;
  static constexpr std::int64_t values_parallel_from = std::int64_t{1} << 16;
  /// The trainer's loops: multiply-adds per chunk of rows, and from which helpers join.
  static constexpr std::int64_t train_chunk_work = std::int64_t{1} << 15;
  static constexpr std::int64_t train_parallel_from = std::int64_t{1} << 15;
};

/// Every algorithm's tuning.
struct tuning {
  elementwise_tuning elementwise;
  train_tuning train;
  pipeline_tuning pipeline;
};

/// The tuning for a device of compute capability major.minor. Every family
/// from sm_70 to sm_100 gets the defaults above, because those come from
/// limits these families share (2048 threads and 32 blocks per
/// multiprocessor, 1024 threads per block), not from a measurement on one of
/// them; only cuBLAS's workspace follows its documented size per family. A
/// row per architecture is added here only from a measured GPU sweep
/// (bench/, docs/gpu-check.md), never from a guess.
constexpr tuning tuning_for(int major, int minor) {
  (void)minor;
  tuning t{};
  if (major < 9) { t.train.cublas_workspace_bytes = std::int64_t{4} << 20; }
  return t;
}

}  // namespace fusekit
