// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Teams: how one algorithm body runs on every backend.
///
/// The bodies shared by the CPU and the GPU (the descent step, the power
/// iteration, the deterministic tree's tile) are written once against a
/// *team*: the members that work on one output or one tile together. A team
/// offers these members (`is_team` holds a type to all of them, and every
/// shared body static_asserts it):
///
/// | member | meaning |
/// |--------|---------|
/// | `for_each(n, f)` | f(i) for every i < n; the calls are independent |
/// | `sum<R>(n, f)` | Σ f(i) over i < n in R, in a fixed order; every member gets it |
/// | `column_sums<R>(rows, lanes, out, value)` | out[l] = Σ_r value(r, l), r in order from R(0), for l < lanes |
/// | `column_reduce<R>(lane, count, value, op)` | lane[l] = value(0, l) ⊕ value(1, l) ⊕ ... ⊕ value(R−1, l), row r only where l < count(r) |
/// | `combine_pairs(lane, pairs, s, op)` | lane[i] = lane[i] ⊕ lane[i + s] for i < pairs: one step of a tile's pairwise tree |
/// | `sync()` | what a member wrote is seen by every member after this |
/// | `leader()` | true for exactly one member |
///
/// Each member takes the same indices in `for_each` and `sum`, so a value a
/// member wrote in one is read by the same member in the next without `sync`.
///
/// `serial_team` (detail/team/cpu_team.hpp) is the CPU's: one thread plays every member, `sum`
/// adds in index order, `for_each` is a SIMD loop and `column_reduce` runs
/// row by row, each row a SIMD loop across the lanes (for plus, min and max,
/// host vectors of lanes taking 8 rows at a time: detail/team/cpu_columns.hpp). `block_team`
/// (detail/team/block_team.cuh) is a CUDA thread block: member t takes i = t, t + blockDim,
/// ...; `sum` is cub::WarpReduce per warp, then the warp sums in warp order;
/// in `column_reduce` member l loads its R values first (R loads in flight;
/// 8 at a time for 8-byte accumulators, to bound the registers), then
/// combines them in row order. Either way each lane combines the same
/// values in the same order: the result is the same bits.

#include <fusekit/config.hpp>

#include <cstdint>
#include <type_traits>
#include <utility>

namespace fusekit {
namespace detail {
inline namespace team {

/// Element i of an array as a callable: how a backend hands the shared bodies
/// a gradient it holds in memory (a host lambda would not be callable from
/// their __host__ __device__ code under nvcc).
template <class T>
struct element_of {
  const T* data;
  FUSEKIT_HD FUSEKIT_FORCEINLINE T operator()(std::int64_t i) const { return data[i]; }
};

/// Callables of the kinds the shared bodies hand a team, for `is_team`.
struct team_probe_index {
  FUSEKIT_HD void operator()(std::int64_t) const {}
};
struct team_probe_value {
  FUSEKIT_HD double operator()(std::int64_t) const { return 0.0; }
};
struct team_probe_cell {
  FUSEKIT_HD double operator()(std::int64_t, std::int64_t) const { return 0.0; }
};
struct team_probe_count {
  FUSEKIT_HD std::int64_t operator()(std::int64_t) const { return 0; }
};
struct team_probe_op {
  FUSEKIT_HD double operator()(double, double) const { return 0.0; }
};
struct team_probe_access {
  using value_type = void;
  FUSEKIT_HD void prefetch(std::int64_t, int) const {}
  FUSEKIT_HD void prefetch_far(std::int64_t, int) const {}
};

/// Whether Team has every member of the contract above, callable as the
/// shared bodies call it: `serial_team`, `block_team` and the tests'
/// `threaded_team` do. Each shared body says `static_assert(is_team_v<Team>)`,
/// so a team that misses one fails there, by name, not deep in a body.
template <class Team, class = void>
struct is_team : std::false_type {};

template <class Team>
struct is_team<
    Team, std::void_t<decltype(std::declval<const Team&>().for_each(std::int64_t{}, team_probe_index{})),
                      decltype(std::declval<const Team&>().template sum<double>(std::int64_t{}, team_probe_value{})),
                      decltype(std::declval<const Team&>().template column_sums<double>(
                          std::int64_t{}, std::int64_t{}, static_cast<double*>(nullptr), team_probe_cell{})),
                      decltype(std::declval<const Team&>().template column_reduce<2>(
                          static_cast<double*>(nullptr), team_probe_count{}, team_probe_cell{}, team_probe_op{},
                          team_probe_access{})),
                      decltype(std::declval<const Team&>().combine_pairs(static_cast<double*>(nullptr), std::int64_t{},
                                                                         std::int64_t{}, team_probe_op{})),
                      decltype(std::declval<const Team&>().sync()),
                      std::enable_if_t<std::is_convertible_v<decltype(std::declval<const Team&>().leader()), bool>>>>
    : std::true_type {};

template <class Team>
inline constexpr bool is_team_v = is_team<Team>::value;

}  // namespace team
}  // namespace detail
}  // namespace fusekit
