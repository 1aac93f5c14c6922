// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `block_team`: a CUDA thread block as the team of detail/team/team.hpp, so the
/// bodies the CPU tests run (descent step, power iteration, tree tile) run
/// here unchanged. Member t takes indices t, t + blockDim.x, ...; `sum` reduces
/// each warp with cub::WarpReduce and then adds the warp sums in warp order,
/// so a block gives the same bits on every run.

#include <fusekit/config.hpp>
#include <fusekit/reduce_types.hpp>

#include <cub/warp/warp_reduce.cuh>

#include <cstdint>
#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace team {

/// Threads in a warp: 32 on every CUDA architecture (CUDA's `warpSize`, which
/// is a run-time value only for the language's sake).
inline constexpr int warp_threads = 32;

/// Most warps a block_team has (1024 threads).
inline constexpr int block_team_max_warps = 1024 / warp_threads;

/// Shared memory a block_team needs, in doubles: a slot per warp and one for the total.
inline constexpr int block_team_scratch = block_team_max_warps + 1;

/// A thread block of any size up to 1024 (fusekit launches whole warps; a
/// last warp that is partial is summed over its members only).
class block_team {
 public:
  /// `scratch`: `block_team_scratch` doubles of shared memory, for this team alone.
  __device__ explicit block_team(double* scratch) : scratch_(scratch) {}

  template <class F>
  __device__ FUSEKIT_FORCEINLINE void for_each(std::int64_t n, const F& f) const {
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) { f(i); }
  }

  template <class R, class F>
  __device__ R sum(std::int64_t n, const F& f) const {
    R part = R(0);
    for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) { part = part + f(i); }
    return total(part);
  }

  /// Σ of one value per member, on every member.
  template <class R>
  __device__ R total(R part) const {
    static_assert(sizeof(R) <= sizeof(double), "block_team sums values of at most 8 bytes");
    using warp_reduce = cub::WarpReduce<R>;
    __shared__ typename warp_reduce::TempStorage storage[block_team_max_warps];
    R* const slots = reinterpret_cast<R*>(scratch_);
    int const members = static_cast<int>(blockDim.x);
    int const warp = static_cast<int>(threadIdx.x) / warp_threads;
    int const lanes = members - warp * warp_threads;  // this warp's members: fewer than 32 in a partial last warp
    R const warp_sum =
        lanes >= warp_threads ? warp_reduce(storage[warp]).Sum(part) : warp_reduce(storage[warp]).Sum(part, lanes);
    if (static_cast<int>(threadIdx.x) % warp_threads == 0) { slots[warp] = warp_sum; }
    __syncthreads();
    if (threadIdx.x == 0) {
      R t = R(0);
      int const warps = (members + warp_threads - 1) / warp_threads;
      for (int w = 0; w < warps; ++w) { t = t + slots[w]; }
      slots[block_team_max_warps] = t;
    }
    __syncthreads();
    R const result = slots[block_team_max_warps];
    __syncthreads();  // the slots serve the next sum
    return result;
  }

  /// See detail/team/team.hpp: member l sums its column in a register.
  template <class R, class Value>
  __device__ void column_sums(std::int64_t rows, std::int64_t lanes, R* out, const Value& value) const {
    for (std::int64_t l = threadIdx.x; l < lanes; l += blockDim.x) {
      R s = R(0);
      for (std::int64_t r = 0; r < rows; ++r) { s = s + value(r, l); }
      out[l] = s;
    }
  }

  /// See detail/team/team.hpp: member l loads a batch of its rows into registers,
  /// then combines them in row order. The batch is every row for a sum in
  /// 4-byte accumulators, `op_batch` rows for another op on them (IEEE minimum
  /// and maximum, and callers' ops, take more registers per value: float
  /// minimum over 32 rows spilled at the 64-register cap), and `wide_batch`
  /// rows for 8-byte accumulators: 32 of those in registers took the tree
  /// kernel to ~150 registers, one block per SM. The batch groups the loads
  /// only: the values combine in row order whatever it is, so the bits do not
  /// depend on it.
  /// The batches do not run in sequence: ptxas issues the next batch's loads
  /// before this one's adds, and keeps 4-byte elements unconverted until
  /// added (32 loads in flight; codegen.tree_loads_in_flight counts them).
  template <int Rows, class Acc, class Count, class Value, class Op, class Access>
  __device__ void column_reduce(Acc* lane, const Count& count, const Value& value, const Op& op, const Access&) const {
    constexpr int most = sizeof(Acc) > 4 ? wide_batch : std::is_same_v<Op, ::fusekit::plus> ? Rows : op_batch;
    constexpr int batch = Rows > most ? most : Rows;
    static_assert(Rows % batch == 0, "column_reduce: the rows split into whole batches");
    for (std::int64_t l = threadIdx.x; l < count(0); l += blockDim.x) {
      Acc acc{};
#pragma unroll
      for (int r0 = 0; r0 < Rows; r0 += batch) {
        Acc v[batch];
#pragma unroll
        for (int r = 0; r < batch; ++r) { v[r] = l < count(r0 + r) ? value(r0 + r, l) : Acc{}; }
#pragma unroll
        for (int r = 0; r < batch; ++r) {
          if (r0 + r == 0) {
            acc = v[0];
          } else if (l < count(r0 + r)) {
            acc = op(acc, v[r]);
          }
        }
      }
      lane[l] = acc;
    }
  }

  /// lane[l] = op(lane[l], lane[l + s]) for l < pairs (pairs ≤ s): member t takes t, t + blockDim, ...
  template <class Acc, class Op>
  __device__ FUSEKIT_FORCEINLINE void combine_pairs(Acc* lane, std::int64_t pairs, std::int64_t s, const Op& op) const {
    for_each(pairs, [&](std::int64_t l) { lane[l] = op(lane[l], lane[l + s]); });
  }

  /// Loads in flight per member in `column_reduce` for 8-byte accumulators.
  static constexpr int wide_batch = 8;
  /// ... for 4-byte accumulators combined by an op other than plus.
  static constexpr int op_batch = 16;

  __device__ void sync() const { __syncthreads(); }
  __device__ bool leader() const { return threadIdx.x == 0; }

 private:
  double* scratch_;
};

}  // namespace team
}  // namespace detail
}  // namespace fusekit
