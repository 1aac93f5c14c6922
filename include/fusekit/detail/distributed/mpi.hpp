// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// fusekit::mpi's backend (contract in mpi.hpp): the deterministic tree over
/// the ranks' shards, the other algorithms folded in rank order, and the
/// trainer with its sums over the ranks; every call checks its arguments and
/// its call key collectively first (detail/distributed/mpi_collectives.hpp).

#include <fusekit/detail/distributed/cpu.hpp>
#include <fusekit/detail/distributed/local.hpp>
#include <fusekit/detail/distributed/mpi_collectives.hpp>
#include <fusekit/detail/elementwise/cpu.hpp>
#include <fusekit/detail/reduce/cpu.hpp>
#include <fusekit/detail/reduce/cpu_segmented.hpp>
#include <fusekit/detail/reduce/segments.hpp>
#include <fusekit/detail/train/cpu.hpp>

#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace distributed {

template <>
inline constexpr bool is_distributed_policy_v<mpi> = true;

}  // namespace distributed
inline namespace reduce {
template <>
inline constexpr bool segmented_on_each_rank_v<mpi> = true;
}  // namespace reduce
inline namespace distributed {

/// init ⊕ the values `src` reads on every rank's shard, in the deterministic
/// tree's order (detail/distributed/tree.hpp); the same bits on every rank.
template <class Acc, class Src, class Op>
Acc mpi_tree_reduce(const char* function, const mpi& policy, const Src& src, std::int64_t size, const Op& op,
                    Acc init) {
  std::vector<shard> const layout = gather_layout(function, policy, size);
  check_layout(function, layout);  // every rank checks the same layout: the same exception everywhere
  int const rank = mpi_rank(policy.comm), ranks = mpi_size(policy.comm);
  std::vector<tree_exchange> plans;
  for (int r = 0; r < ranks; ++r) { plans.push_back(plan_tree_exchange(layout, r)); }
  tree_exchange const& x = plans[static_cast<std::size_t>(rank)];
  if (x.n == 0) { return init; }

  // Heads to their tiles' owners, placed in the tail by the senders' offsets.
  std::vector<Acc> head(static_cast<std::size_t>(x.head));
  for (std::int64_t i = 0; i < x.head; ++i) { head[static_cast<std::size_t>(i)] = src(i); }
  std::vector<int> send_counts(static_cast<std::size_t>(ranks), 0), send_displs(send_counts.size(), 0);
  std::vector<int> recv_counts(send_counts.size(), 0), recv_displs(send_counts.size(), 0);
  if (x.head > 0) { send_counts[static_cast<std::size_t>(x.head_owner)] = static_cast<int>(x.head); }
  int at = 0;
  for (int r : x.recv_order) {
    recv_counts[static_cast<std::size_t>(r)] = static_cast<int>(x.recv_counts[static_cast<std::size_t>(r)]);
    recv_displs[static_cast<std::size_t>(r)] = at;
    at += recv_counts[static_cast<std::size_t>(r)];
  }
  std::vector<Acc> tail(static_cast<std::size_t>(x.tail));
  FUSEKIT_MPI_TRY(MPI_Alltoallv(head.data(), send_counts.data(), send_displs.data(), mpi_type<Acc>(), tail.data(),
                                recv_counts.data(), recv_displs.data(), mpi_type<Acc>(), policy.comm));

  // This rank's tiles, then every rank's tile results in place, then the upper levels.
  std::vector<Acc> const mine =
      owned_tile_results<Acc>(policy.local, src, layout[static_cast<std::size_t>(rank)], tail.data(), x, op);
  std::vector<Acc> level(static_cast<std::size_t>(tree_level_size(x.n)));
  std::vector<int> counts(static_cast<std::size_t>(ranks)), displs(counts.size());
  for (std::size_t r = 0; r < plans.size(); ++r) {
    counts[r] = static_cast<int>(plans[r].end_tile - plans[r].first_tile);
    displs[r] = static_cast<int>(plans[r].first_tile);
  }
  FUSEKIT_MPI_TRY(MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), mpi_type<Acc>(), level.data(),
                                 counts.data(), displs.data(), mpi_type<Acc>(), policy.comm));
  return op(init, cpu_tree_upper(policy.local, std::move(level), op));
}

/// init ⊕ every rank's values with the algorithm the tag names (checked by the caller).
template <class Acc, class Src, class Op, class A>
Acc mpi_reduce(const char* function, const mpi& policy, const Src& src, std::int64_t size, A algorithm, const Op& op,
               Acc init) {
  if constexpr (std::is_same_v<A, deterministic>) {
    return mpi_tree_reduce(function, policy, src, size, op, init);
  } else {
    // Each rank reduces its shard, then every rank folds the ranks' results in
    // rank order with op itself (fold_in_rank_order, not MPI_SUM/MIN/MAX).
    Acc mine = init;
    if (size > 0) {
      if constexpr (atomic_op<Op, Acc>::exists) {  // every algorithm, from the op's identity
        mine = cpu_reduce(policy.local, src, size, algorithm, op, atomic_op<Op, Acc>::identity());
      } else {  // run_to_run: the only algorithm an op without an atomic takes (checked)
        mine = cpu_parallel_reduce<Acc>(policy.local, src, size, op);
      }
    }
    return fold_in_rank_order(mpi_gather{policy.comm}, mine, size, op, init);
  }
}

/// fusekit::mpi's reduction hook (detail/reduce/reduction.hpp): the checks and
/// the call key collectively, then the reduction over every rank.
template <class R, class A>
auto run_reduce(reduce_tag, const mpi& policy, const R& r, A algorithm) {
  std::int64_t n = 0;
  collective_check(policy.comm, reduction_key(r, algorithm_id(algorithm)), [&] { n = check_reduction(r, algorithm); });
  auto const result = mpi_reduce(r.function, policy, cpu_source(r.src), n, algorithm, no_throw(r.op), r.init);
  if constexpr (R::returns_value) {
    return result;
  } else {
    *r.out = result;
  }
}

template <class T>
fit_report run_fit(fit_tag, const mpi& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                   const fit_extras<T>& extras = {}) {
  const char* const f = "fusekit::fit";
  MPI_Comm const comm = policy.comm;
  expect_communicator(comm);
  int const ranks = mpi_size(comm);
  cpu const& local = policy.local;
  // A shard without rows has no weights to give: it takes the other ranks'
  // answer (1 given, 0 not, -1 a shard without rows), so that an empty shard
  // joins a weighted fit, as docs/distributed.md says shards may be empty.
  int const mine_weighted = extras.sample_weight.empty() ? (X.extent(0) == 0 ? -1 : 0) : 1;
  int any_weighted = mine_weighted;
  FUSEKIT_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, &any_weighted, 1, MPI_INT, MPI_MAX, comm));
  bool const weighted = weighted_fit(mine_weighted, any_weighted);
  call_key key = fit_key<T>(f, X.extent(1), Y.extent(1), o, bytes_hash(W.data_handle(), W.extent(0) * W.extent(1)));
  with_extras(key, weighted, !extras.intercept.empty());
  collective_check(comm, key, [&] {
    (void)cpu_thread_count(local);  // a negative count, before anything else
    check_fit(X, Y, W, o, non_finite_counter<cpu>{local}, true, extras);
    check_fit_extras(extras, o, X.extent(0), Y.extent(1), non_finite_counter<cpu>{local});
  });
  // L and N agree, and some rank has rows.
  std::int64_t const mine[3] = {X.extent(0), X.extent(1), Y.extent(1)};
  std::vector<std::int64_t> shapes(3 * static_cast<std::size_t>(ranks));
  FUSEKIT_MPI_TRY(MPI_Allgather(mine, 3, MPI_INT64_T, shapes.data(), 3, MPI_INT64_T, comm));
  std::int64_t const K = rows_in_all(std::string(f) + " (mpi)", shapes);
  // Gram: A and B summed over the ranks once, then no communication in the
  // iterations, so outputs may run in parallel. Direct: every gradient (and
  // the power iteration's every product, CGLS's qᵀq and r) is summed over the
  // ranks, outputs one after another.
  // Every rank calls the progress callback at the same iterations; one that
  // throws on some ranks throws on all (its own exception where it threw, a
  // runtime_error naming the rank elsewhere), with W the iterate at that point.
  gd_options collective = o;
  collective.progress = collective_progress("fusekit::fit (mpi)", o, mpi_gather{comm});
  fit_report report = cpu_fit_with_extras(
      local, X, Y, W, collective, extras, weighted, K,
      [&](auto* values, std::int64_t count) { ordered_allreduce_sum(comm, values, count); },
      [&](double* values, std::int64_t count) {
        FUSEKIT_MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, values, static_cast<int>(count), MPI_DOUBLE, MPI_MAX, comm));
      },
      mpi_rank(comm) == 0, false);
  report.path = fusekit::fit_path::mpi;
  return report;
}

}  // namespace distributed
}  // namespace detail
}  // namespace fusekit
