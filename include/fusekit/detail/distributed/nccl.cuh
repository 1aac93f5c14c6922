// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// fusekit::nccl's backend (contract in nccl.cuh): NCCL's names for the
/// element types, the error check of every NCCL call, the agreement every
/// collective call makes first (call key, checks, progress: the same code as
/// fusekit::mpi's, detail/distributed/agreement.hpp), the deterministic tree
/// over the GPUs' shards, the other sums folded in rank order, and the Gram
/// fit with A and B summed over the ranks once, with ridge, intercepts and
/// sample weights prepared as on fusekit::mpi.

#include <fusekit/detail/distributed/nccl_collectives.cuh>
#include <fusekit/detail/distributed/local.hpp>
#include <fusekit/detail/distributed/tree.hpp>
#include <fusekit/detail/elementwise/cuda.cuh>
#include <fusekit/detail/reduce/cuda.cuh>
#include <fusekit/detail/train/cuda.cuh>
#include <fusekit/nccl_types.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {

// This file is a backend of every algorithm (see detail/core/dispatch.hpp).
template <>
struct is_execution_policy<nccl> : std::true_type {};
template <class Tag>
struct backend_available<Tag, nccl> : std::true_type {};

inline namespace distributed {

template <>
inline constexpr bool is_distributed_policy_v<nccl> = true;

template <class Acc, class Src>
__global__ void evaluate_kernel(Src src, std::int64_t n, Acc* out) {
  for (std::int64_t i = global_thread_id(); i < n; i += grid_stride()) { out[i] = src(i); }
}

/// *out (device) = init ⊕ every rank's values in the deterministic tree's order.
template <class Acc, class Src, class Op>
void nccl_tree_reduce(const char* function, const nccl& p, const Src& src, std::int64_t size, const Op& op, Acc init,
                      Acc* out) {
  cudaStream_t const s = p.local.stream;
  int const rank = nccl_rank(p), ranks = nccl_size(p);
  std::vector<shard> const layout =
      layout_from(function, nccl_allgather_host(p, std::vector<std::int64_t>{p.offset, size}));
  check_layout(function, layout);  // the same layout everywhere: the same exception everywhere
  std::vector<tree_exchange> plans;
  for (int r = 0; r < ranks; ++r) { plans.push_back(plan_tree_exchange(layout, r)); }
  tree_exchange const& x = plans[static_cast<std::size_t>(rank)];
  if (x.n == 0) {
    launch(store_kernel<Acc>, 1, 1, 0, s, out, init);
    return;
  }
  // Heads to their tiles' owners.
  stream_buffer<Acc> const head(p.local, x.head), tail(p.local, x.tail);
  int const block = tuning_of(p.local).elementwise.block_threads;
  launch(evaluate_kernel<Acc, Src>, resident_grid(evaluate_kernel<Acc, Src>, x.head, block), block, 0, s, src, x.head,
         head.get());
  FUSEKIT_NCCL_TRY(ncclGroupStart());
  if (x.head > 0) {
    FUSEKIT_NCCL_TRY(ncclSend(head.get(), static_cast<std::size_t>(x.head), nccl_type<Acc>(), x.head_owner, p.comm, s));
  }
  std::int64_t at = 0;
  for (int r : x.recv_order) {
    std::int64_t const count = x.recv_counts[static_cast<std::size_t>(r)];
    FUSEKIT_NCCL_TRY(ncclRecv(tail.get() + at, static_cast<std::size_t>(count), nccl_type<Acc>(), r, p.comm, s));
    at += count;
  }
  FUSEKIT_NCCL_TRY(ncclGroupEnd());
  // This rank's tiles into the first level, at their place; then every owner broadcasts its tiles.
  stream_buffer<std::byte> const temp(p.local, static_cast<std::int64_t>(tree_temp_bytes<Acc>(x.n)));
  std::int64_t const tiles = tree_level_size(x.n);
  std::array<Acc*, 2> const buffers = tree_level_buffers<Acc>(temp.get(), tiles);
  const shard& me = layout[static_cast<std::size_t>(rank)];
  Acc* const level = tiles == 1 ? out : buffers[0];
  if (x.end_tile > x.first_tile) {
    using stitched = stitched_source<Acc, Src>;
    shifted_source<stitched> const mine{stitched{src, me.offset, me.size, tail.get()}, x.first_tile * tree_tile};
    std::int64_t const end = x.end_tile * tree_tile < x.n ? x.end_tile * tree_tile : x.n;
    std::int64_t const n_mine = end - x.first_tile * tree_tile;
    auto const kernel = tree_level_kernel<Acc, shifted_source<stitched>, Op>;
    launch(kernel, device_grids{}.tree_level(kernel, n_mine), tree_lanes, 0, s, mine, op, n_mine, level + x.first_tile,
           tiles == 1, init);
  }
  if (tiles == 1) {  // one tile: its owner has the result; the others get it from there
    FUSEKIT_NCCL_TRY(ncclBroadcast(out, out, 1, nccl_type<Acc>(), owner_of(layout, 0), p.comm, s));
    return;
  }
  FUSEKIT_NCCL_TRY(ncclGroupStart());
  for (int r = 0; r < ranks; ++r) {
    const tree_exchange& y = plans[static_cast<std::size_t>(r)];
    if (y.end_tile == y.first_tile) { continue; }
    auto const count = static_cast<std::size_t>(y.end_tile - y.first_tile);
    Acc* const at = level + y.first_tile;
    FUSEKIT_NCCL_TRY(ncclBroadcast(at, at, count, nccl_type<Acc>(), r, p.comm, s));
  }
  FUSEKIT_NCCL_TRY(ncclGroupEnd());
  cuda_tree_upper_levels(buffers, tiles, op, out, init, s, device_grids{});
}

/// The first value of a source on the device, as a host value (synchronizes).
template <class Acc, class Src>
Acc nccl_first_value(const nccl& p, const Src& src, Acc* scratch) {
  launch(evaluate_kernel<Acc, Src>, 1, 1, 0, p.local.stream, src, std::int64_t{1}, scratch);
  return device_value(p.local, scratch);
}

/// *out (device) = init ⊕ every rank's values with the algorithm A: the tree
/// over the shards for `deterministic`; otherwise each rank reduces its shard,
/// then every rank folds the ranks' results in rank order with op
/// (fold_in_rank_order, as fusekit::mpi does; not ncclAllReduce's sum): the
/// same bits on every rank.
template <class Acc, class Src, class Op, class A>
void nccl_reduce(const char* function, const nccl& p, const Src& src, std::int64_t size, A algorithm, const Op& op,
                 Acc init, Acc* out) {
  if constexpr (std::is_same_v<A, deterministic>) {
    nccl_tree_reduce(function, p, src, size, op, init, out);
  } else {
    Acc const all = shards_in_rank_order(
        nccl_gather{&p}, src, size, op, init,
        [&](const Src& from, std::int64_t n, Acc start) {
          cuda_reduce(p.local, from, n, out, algorithm, op, start);
          return device_value(p.local, out);
        },
        [&](const Src& from) { return nccl_first_value(p, from, out); });
    launch(store_kernel<Acc>, 1, 1, 0, p.local.stream, out, all);
  }
}

/// The views of a call on fusekit::nccl are device memory.
template <class... Ts>
void expect_device_views(const char* function, const Ts*... pointers) {
  bool const device = ((pointers == nullptr || memory_space_of(pointers) == memory_space::device) && ...);
  FUSEKIT_EXPECTS(device, std::string(function) + " (nccl): every view must be device memory");
}

/// ... the arrays of a source, and out (null for a host value).
template <std::size_t I, class Acc>
void expect_device_views(const char* function, const std::array<const std::byte*, I>& arrays, const Acc* out) {
  for (const std::byte* a : arrays) { expect_device_views(function, a); }
  expect_device_views(function, out);
}

/// fusekit::nccl's reduction hook (detail/reduce/reduction.hpp): the checks
/// and the call key collectively, then the reduction over every GPU. Device
/// memory only; a host value synchronizes.
template <class R, class A>
auto run_reduce(reduce_tag, const nccl& p, const R& r, A algorithm) {
  using Acc = typename R::accumulator;
  std::int64_t n = 0;
  nccl_collective_check(p, reduction_key(r, algorithm_id(algorithm)), [&] {
    n = check_reduction(r, algorithm);
    expect_device_views(r.function, source_arrays(r.src), r.out);
  });
  auto const into = [&](Acc* out) { nccl_reduce(r.function, p, r.src, n, algorithm, r.op, r.init, out); };
  if constexpr (R::returns_value) {
    return device_scalar_result<Acc>(p.local, into);
  } else {
    into(r.out);
  }
}

/// The system of a fit across GPUs: this rank's A and B (and a refinement's
/// B), then summed over the ranks, so every rank iterates the same system;
/// on X (the direct formulation, or CGLS where the Cholesky factor leaves
/// A), the iterations add their sums over the rows over the ranks the same
/// way (cublas_iterations). ncclAllReduce gives every rank the same bits.
template <class T>
struct nccl_system : device_system<T> {
  static constexpr bool ranks = true;
  const nccl& p;
  std::int64_t rows_in_all_ranks;
  [[nodiscard]] std::int64_t total_rows() const { return rows_in_all_ranks; }
  template <class V>
  void sum_over_ranks(V* values, std::int64_t count) const {
    FUSEKIT_NCCL_TRY(ncclAllReduce(values, values, static_cast<std::size_t>(count), nccl_type<V>(), ncclSum, p.comm,
                                   p.local.stream));
  }
  void gram(const cublas_context& cublas, T* A, T* B) const {
    device_system<T>::gram(cublas, A, B);
    sum_over_ranks(A, this->X.extent(1) * this->X.extent(1));
    sum_over_ranks(B, this->Y.extent(1) * this->X.extent(1));
  }
  void residual(const cublas_context& cublas, const T* W, T* scratch, T* B) const {
    device_system<T>::residual(cublas, W, scratch, B);
    sum_over_ranks(B, this->Y.extent(1) * this->X.extent(1));
  }
  /// This rank's residual terms, summed over the ranks in rank order (and K):
  /// every rank decides alike.
  [[nodiscard]] std::vector<double> residual_terms(const cuda& policy, const residual_candidates<T>& c, std::int64_t N,
                                                   std::int64_t L, T* out) const {
    std::vector<double> terms = device_system<T>::residual_terms(policy, c, N, L, out);
    doubles_in_rank_order(nccl_gather{&p}, terms.data(), static_cast<std::int64_t>(terms.size()),
                          [](double a, double b) { return a + b; });
    return terms;
  }
};

/// The fit across GPUs, with its extras (ridge, an intercept, sample weights,
/// and the rescaling of extreme units) as on fusekit::mpi: the ranges of the
/// columns and the preparation's sums are taken over the ranks in rank
/// order (doubles_in_rank_order, fusekit::mpi's order), rank 0 adds the
/// ridge's rows, and each rank's prepared rows go to its GPU; then the fit
/// with A and B summed over the ranks (nccl_system), in either formulation,
/// chosen from every rank's rows. A rank without rows and without weights
/// joins a weighted fit.
template <class T>
fit_report run_fit(fit_tag, const nccl& p, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o,
                   const fit_extras<T>& e = {}) {
  const char* const f = "fusekit::fit";
  std::int64_t const K = X.extent(0), L = X.extent(1), N = Y.extent(1);
  // The warm start's hash, from W's bytes on this GPU: every rank must start alike.
  std::int64_t warm = 0;
  if (o.init == gd_init::warm_start && W.data_handle() != nullptr &&
      memory_space_of(W.data_handle()) == memory_space::device) {
    std::vector<T> const start = host_copy(p.local, static_cast<const T*>(W.data_handle()), N * L);
    warm = bytes_hash(start.data(), static_cast<std::int64_t>(start.size()));
  }
  nccl_gather const gather{&p};
  bool const weighted = agreed_weighting(gather, e.sample_weight.empty() ? (K == 0 ? -1 : 0) : 1);
  call_key key = fit_key<T>(f, L, N, o, warm);
  host_extras<T> on_host;  // the weights read back for their checks
  nccl_collective_check(p, with_extras(key, weighted, !e.intercept.empty()), [&] {
    check_fit(X, Y, W, o, non_finite_counter<cuda>{p.local}, true, e);
    check_fit_extras_sizes(e, o, K, N);
    expect_device_views(f, X.data_handle(), Y.data_handle(), W.data_handle(), e.sample_weight.data(),
                        static_cast<const T*>(e.intercept.data()));
    on_host.read(p.local, e);
    check_fit_extras(on_host.view(), o, K, N, host_non_finite_counter{});
  });
  std::vector<std::int64_t> const shapes = {K, L, N};
  std::int64_t const total_rows = rows_in_all(std::string(f) + " (nccl)", nccl_allgather_host(p, shapes));
  gd_options collective = o;
  // Every rank calls the progress callback at the same points; one that throws
  // on some ranks throws on all, as on fusekit::mpi.
  collective.progress = collective_progress("fusekit::fit (nccl)", o, gather);
  auto const fit_on = [&](auto Xd, auto Yd, auto Wd, const gd_options& options) {
    using U = std::remove_cv_t<typename decltype(Xd)::element_type>;
    std::int64_t rows = 0;  // every rank's rows of the system fitted (the prepared copy's: rank 0 adds the ridge's)
    for (std::int64_t r : nccl_allgather_host(p, std::vector<std::int64_t>{Xd.extent(0)})) { rows += r; }
    fit_report report = cuda_fit_checked(p.local, Xd, Yd, Wd, options, nullptr,
                                         nccl_system<U>{{Xd, Yd, p.local.stream}, p, rows}, automatic_path{});
    report.path = report.path == fusekit::fit_path::single_launch ? fusekit::fit_path::nccl_single_launch
                                                                  : fusekit::fit_path::nccl_cublas;
    return report;
  };
  auto const sum = [&](double* values, std::int64_t count) {
    doubles_in_rank_order(gather, values, count, [](double a, double b) { return a + b; });
  };
  auto const max = [&](double* values, std::int64_t count) {
    doubles_in_rank_order(gather, values, count, [](double a, double b) { return a > b ? a : b; });
  };
  std::vector<double> high, low, y_largest;
  std::vector<int> const exponents = gpu_column_exponents(p.local, X, Y, o, max, high, low, y_largest);
  if (!needs_preparation(weighted, o, exponents)) {
    copy_from_host(p.local, e.intercept.data(), on_host.intercept.data(),
                   static_cast<std::int64_t>(on_host.intercept.size()));
    return fit_on(X, Y, W, collective);  // no intercept: b = 0, as documented
  }
  return gpu_prepared_fit(p.local, X, Y, W, collective, on_host.view(), e.intercept, weighted, total_rows,
                          {high, low, y_largest}, nccl_rank(p) == 0, sum, max, fit_on);
}

}  // namespace distributed
}  // namespace detail
}  // namespace fusekit
