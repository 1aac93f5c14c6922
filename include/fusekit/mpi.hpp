// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// fusekit across the ranks of an MPI communicator, on the CPU (CMake
/// component `fusekit::mpi`; link it, or MPI yourself, to use this header).
///
///     fusekit::mpi const world{MPI_COMM_WORLD};          // fusekit::cpu on each rank, MPI between them
///     float s = fusekit::sum(world, my_shard, fusekit::reduce_algorithm::deterministic);
///     fusekit::fit_report r = fusekit::fit(world, my_X_rows, my_Y_rows, W, options);
///
/// `fusekit::mpi{comm, local, offset}` is a policy like `fusekit::cpu`: every
/// rank calls the same algorithm with its own shard, and every rank gets the
/// whole result. A shard is a block of the global sequence (of the rows, for
/// the trainer): after the lower ranks' shards (`offset` −1, the default), or
/// at the global index `offset` the caller gives (the shards must then tile
/// [0, n) without gaps or overlaps). Shards may be empty.
///
/// **Reproducibility across rank counts.**
/// * `deterministic` sums, reduces and transform_reduces give the bits of the
///   single-process call over the concatenated data, on every rank, for any
///   number of ranks and any split: values before a rank's first tile boundary
///   move to the owner of their tile, and only the per-tile results travel
///   after that (detail/distributed_tree.hpp).
/// * `naive_atomic`, `block_atomic` and `cub` reduce each shard as on one CPU,
///   then every rank combines the P rank results with the op, in rank order
///   (one MPI_Allgather): the same bits on every rank; for a sum, the
///   single-process bound plus (P − 1)·u·Σ|rank results|, and bits that may
///   change with P and the split.
/// * `fit` with the Gram formulation sums XᵀX and YᵀX over each rank's rows,
///   then over the ranks in rank order (one gather and broadcast), and every
///   rank iterates the same L × L system: the same W and statuses on every
///   rank, the same bits from run to run for a given P and split, and with one
///   rank the bits of the single-process fit; across P, A and B differ by the
///   order of their additions (|ΔA_ij| ≤ 2·K·u·Σ_k |x_ki x_kj|), and W by
///   what that moves within the tolerance.
/// * `fit` with the direct formulation sums each output's gradient over the
///   ranks in rank order at every iteration (and the power iteration's
///   products likewise; conjugate gradients, CGLS, sum qᵀq and r = Xᵀρ, two
///   collectives per iteration, each rank keeping its rows of ρ): the same W
///   and statuses on every rank; across P, the same bound as above for each
///   gradient.
/// * `transform` and `predict` are local: each rank's rows, no communication.
///
/// **Errors are collective.** An argument that fails on any rank throws
/// `fusekit::invalid_argument` on every rank, with the message of the lowest
/// such rank and its number, before anything is computed or communicated
/// further; no rank is left waiting. What a collective call computes must be
/// the same call on every rank: the element and accumulator types, the op,
/// the algorithm, init, every `gd_options` field (the progress callback's
/// presence), L and N. One MPI_Allgather of these (`call_key`) per call
/// checks them with the arguments; a rank that passes something else makes
/// every rank throw `invalid_argument` naming that rank and value. (Without
/// it, a tolerance that differs left a rank waiting forever, and a float
/// shard beside double ones overran a buffer.) `fusekit::mpi{MPI_COMM_NULL}`
/// is rejected before any MPI call, and a shard offset below −1, or a shard
/// that ends past 2^63 − 1, is rejected on every rank.
///
/// **A progress callback that throws** on some ranks throws on all, at the
/// same iteration: its own exception where it threw, `std::runtime_error`
/// naming the rank elsewhere (one MPI_Allreduce per callback).

#include <fusekit/fusekit.hpp>
#include <fusekit/cpu/distributed.hpp>

// The C API only: MPI's deprecated C++ bindings are not needed (and warn).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace fusekit {

/// An MPI call that failed: MPI's error string and code, the call and where
/// it was made (as `cuda_error` for the CUDA libraries). MPI's default handler
/// aborts the job first; a communicator whose handler returns errors
/// (`MPI_ERRORS_RETURN`) gets this exception instead.
class mpi_error : public std::runtime_error {
 public:
  mpi_error(int code, const char* call, const char* file, int line)
      : std::runtime_error(describe(code, call, file, line)), code_(code) {}

  /// The code the call returned.
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  static std::string describe(int code, const char* call, const char* file, int line) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) { length = 0; }
    return "fusekit: MPI error " + std::to_string(code) + " (" + std::string(text, static_cast<std::size_t>(length)) +
           ") in '" + call + "' at " + file + ":" + std::to_string(line);
  }
  int code_;
};

/// fusekit::cpu on every rank of `comm`, combined through MPI (see the file comment).
struct mpi {
  MPI_Comm comm = MPI_COMM_WORLD;
  cpu local{};               ///< each rank's own CPU policy (threads)
  std::int64_t offset = -1;  ///< this rank's first global index; −1: after the lower ranks' shards

  mpi() = default;
  explicit mpi(MPI_Comm c, cpu l = {}, std::int64_t first = -1) : comm(c), local(l), offset(first) {}

  /// This policy with this rank's shard at global index `first`.
  [[nodiscard]] mpi at(std::int64_t first) const { return mpi(comm, local, first); }
};

namespace detail {

template <>
struct is_execution_policy<mpi> : std::true_type {};
template <class Tag>
struct backend_available<Tag, mpi> : std::true_type {};

/// MPI's name for T.
template <class T>
MPI_Datatype mpi_type() {
  if constexpr (std::is_same_v<T, float>) {
    return MPI_FLOAT;
  } else if constexpr (std::is_same_v<T, double>) {
    return MPI_DOUBLE;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return MPI_INT64_T;
  } else {
    static_assert(std::is_same_v<T, std::uint64_t>, "fusekit::mpi: float, double, int64_t or uint64_t");
    return MPI_UINT64_T;
  }
}

/// An MPI call that fails throws fusekit::mpi_error naming the call (MPI's
/// default handler aborts first unless the communicator returns errors).
#define FUSEKIT_MPI_TRY(call)                                                   \
  do {                                                                          \
    int const fusekit_mpi_code_ = (call);                                       \
    if (fusekit_mpi_code_ != MPI_SUCCESS) {                                     \
      throw ::fusekit::mpi_error(fusekit_mpi_code_, #call, __FILE__, __LINE__); \
    }                                                                           \
  } while (0)

inline int mpi_rank(MPI_Comm comm) {
  int r = 0;
  FUSEKIT_MPI_TRY(MPI_Comm_rank(comm, &r));
  return r;
}

inline int mpi_size(MPI_Comm comm) {
  int s = 0;
  FUSEKIT_MPI_TRY(MPI_Comm_size(comm, &s));
  return s;
}

/// An FNV-1a hash of a string: the same on every rank of one program.
constexpr std::int64_t text_hash(const char* s) {
  std::uint64_t h = 1469598103934665603ull;
  for (; *s != 0; ++s) { h = (h ^ static_cast<unsigned char>(*s)) * 1099511628211ull; }
  return static_cast<std::int64_t>(h);
}

/// A code for the type T (its name as the compiler spells it, hashed once per
/// type): the same on every rank of one program, different for float and double.
template <class T>
std::int64_t type_code() {
#if defined(__GNUC__) || defined(__clang__)
  static std::int64_t const code = text_hash(__PRETTY_FUNCTION__);
#else
  static std::int64_t const code = text_hash(__FUNCSIG__);
#endif
  return code;
}

/// What every rank of a collective call must pass alike: the function, the
/// element and accumulator types, the op, the algorithm, init, the options, L
/// and N, as up to `capacity` named values. Its size does not depend on the
/// types, so ranks that call with different types still exchange it safely.
struct call_key {
  static constexpr int capacity = 24;
  const char* names[capacity] = {};
  std::int64_t values[capacity] = {};
  int count = 0;

  explicit call_key(const char* function) { add("function called", text_hash(function)); }

  /// A value that must agree (integers, enums, or a value's bits).
  template <class V>
  call_key& add(const char* name, const V& v) {
    std::int64_t bits = 0;
    if constexpr (std::is_enum_v<V> || std::is_integral_v<V>) {
      bits = static_cast<std::int64_t>(v);
    } else {
      static_assert(sizeof(V) <= sizeof(bits) && std::is_trivially_copyable_v<V>, "a value of at most 8 bytes");
      std::memcpy(&bits, &v, sizeof(V));
    }
    if (count == capacity) { throw std::logic_error("fusekit::mpi: call_key holds at most 24 values"); }
    names[count] = name;
    values[count] = bits;
    ++count;
    return *this;
  }
};

/// The options every rank of a fit must share (a callback's presence, not its target).
inline void add_options(call_key& key, const gd_options& o) {
  key.add("learning_rate", o.learning_rate.has_value() ? *o.learning_rate : -1.0)
      .add("tolerance", o.tolerance)
      .add("relative_tolerance", o.relative_tolerance)
      .add("max_iterations", o.max_iterations)
      .add("init", o.init)
      .add("seed", o.seed)
      .add("method", o.method)
      .add("formulation", o.formulation)
      .add("preconditioner", o.preconditioner)
      .add("stall_window", o.stall_window)
      .add("progress (set or not)", static_cast<bool>(o.progress))
      .add("progress_every", o.progress_every);
}

/// Throws `invalid_argument` unless comm is a communicator (MPI_COMM_NULL would
/// make MPI's default handler end the whole job).
inline void expect_communicator(MPI_Comm comm) {
  FUSEKIT_EXPECTS(comm != MPI_COMM_NULL,
                  "fusekit::mpi: comm is MPI_COMM_NULL; pass a communicator this process belongs to");
}

/// Runs this rank's argument checks and compares `key` across the ranks, in
/// one MPI_Allgather. If the keys differ, every rank throws naming the first
/// rank and value that differ from rank 0's; else if any rank's checks failed,
/// every rank throws the lowest failing rank's message. The same exception on
/// every rank, and none left waiting.
template <class Checks>
void collective_check(MPI_Comm comm, const call_key& key, const Checks& checks) {
  expect_communicator(comm);
  std::string message;
  try {
    checks();
  } catch (const invalid_argument& e) { message = e.what(); }
  int const rank = mpi_rank(comm), size = mpi_size(comm);
  constexpr int row = call_key::capacity + 2;
  std::int64_t mine[row] = {};
  mine[0] = message.empty() ? 0 : 1;
  mine[1] = key.count;
  std::memcpy(mine + 2, key.values, sizeof(key.values));
  std::vector<std::int64_t> all(static_cast<std::size_t>(row) * static_cast<std::size_t>(size));
  FUSEKIT_MPI_TRY(MPI_Allgather(mine, row, MPI_INT64_T, all.data(), row, MPI_INT64_T, comm));
  int first = size;
  for (int r = 0; r < size; ++r) {
    const std::int64_t* const theirs = all.data() + static_cast<std::size_t>(r) * row;
    for (int i = 1; i < row; ++i) {
      if (theirs[i] == all[static_cast<std::size_t>(i)]) { continue; }
      bool const same_call = i > 2;  // then the names are the same on every rank
      std::string const what = same_call && i - 2 < key.count ? key.names[i - 2] : "function called or its types";
      throw invalid_argument("fusekit::mpi: rank " + std::to_string(r) + " passes a different " + what +
                             " than rank 0; every rank must pass the same (" + what + ")");
    }
    if (theirs[0] != 0 && first == size) { first = r; }
  }
  if (first == size) { return; }
  int length = rank == first ? static_cast<int>(message.size()) : 0;
  FUSEKIT_MPI_TRY(MPI_Bcast(&length, 1, MPI_INT, first, comm));
  message.resize(static_cast<std::size_t>(length));
  FUSEKIT_MPI_TRY(MPI_Bcast(message.data(), length, MPI_CHAR, first, comm));
  throw invalid_argument(message + " (rank " + std::to_string(first) + ")");
}

/// Every rank's shard (offset, size), the same on every rank.
inline std::vector<shard> gather_layout(const char* function, const mpi& policy, std::int64_t size) {
  int const ranks = mpi_size(policy.comm);
  std::int64_t const mine[2] = {policy.offset, size};
  std::vector<std::int64_t> all(2 * static_cast<std::size_t>(ranks));
  FUSEKIT_MPI_TRY(MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, policy.comm));
  return layout_from(function, all);
}

/// v (count values, the same count on every rank) summed over the ranks in rank
/// order, the same bits on every rank: gathered on rank 0, added, broadcast.
template <class T>
void ordered_allreduce_sum(MPI_Comm comm, T* v, std::int64_t count) {
  int const ranks = mpi_size(comm), rank = mpi_rank(comm);
  if (ranks == 1 || count == 0) { return; }
  auto const c = static_cast<int>(count);
  std::vector<T> all(rank == 0 ? static_cast<std::size_t>(count) * static_cast<std::size_t>(ranks) : 0);
  FUSEKIT_MPI_TRY(MPI_Gather(v, c, mpi_type<T>(), all.data(), c, mpi_type<T>(), 0, comm));
  if (rank == 0) {
    auto const at = [&](int r, std::int64_t i) { return all[static_cast<std::size_t>(r * count + i)]; };
    for (std::int64_t i = 0; i < count; ++i) {
      T s = at(0, i);
      for (int r = 1; r < ranks; ++r) { s = s + at(r, i); }
      v[i] = s;
    }
  }
  FUSEKIT_MPI_TRY(MPI_Bcast(v, c, mpi_type<T>(), 0, comm));
}

/// init ⊕ the values `src` reads on every rank's shard, in the deterministic
/// tree's order (detail/distributed_tree.hpp); the same bits on every rank.
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

/// init ⊕ every rank's values with `algorithm` (checked by the caller).
template <class Acc, class Src, class Op>
Acc mpi_reduce(const char* function, const mpi& policy, const Src& src, std::int64_t size, reduce_algorithm algorithm,
               const Op& op, Acc init) {
  if (algorithm == reduce_algorithm::deterministic) { return mpi_tree_reduce(function, policy, src, size, op, init); }
  // Each rank reduces its shard, then every rank folds the ranks' results in
  // rank order with op itself (not MPI_SUM/MIN/MAX, whose NaN and rounding
  // rules are the MPI library's): the same bits on every rank, for any op.
  struct part {
    Acc value;
    std::int64_t size;
  };
  part mine{init, size};
  if (size > 0) {
    if constexpr (atomic_op<Op, Acc>::exists) {  // every algorithm, from the op's identity
      mine.value = cpu_reduce(policy.local, src, size, algorithm, op, atomic_op<Op, Acc>::identity());
    } else {  // cub: the only algorithm an op without an atomic takes here (checked)
      mine.value = cpu_parallel_reduce<Acc>(policy.local, src, size, op);
    }
  }
  std::vector<part> parts(static_cast<std::size_t>(mpi_size(policy.comm)));
  FUSEKIT_MPI_TRY(MPI_Allgather(&mine, static_cast<int>(sizeof(part)), MPI_BYTE, parts.data(),
                                static_cast<int>(sizeof(part)), MPI_BYTE, policy.comm));
  Acc all = init;
  for (const part& p : parts) {
    if (p.size > 0) { all = op(all, p.value); }
  }
  return all;
}

template <class Checks>
void run(check_tag, const mpi& policy, const Checks& checks) {
  collective_check(policy.comm, call_key("argument checks"), checks);
}

template <class Out, class Op, class... Ins>
void run(transform_tag, const mpi& policy, const call_site& site, ::cuda::std::span<Out> out, const Op& op,
         ::cuda::std::span<Ins>... ins) {
  run(transform_tag{}, policy.local, site, out, op, ins...);  // local: this rank's elements
}

template <class T, class Acc>
void run(reduce_sum_tag, const mpi& policy, ::cuda::std::span<T> in, Acc* out, reduce_algorithm algorithm) {
  const char* const f = "fusekit::reduce_sum";
  call_key key(f);
  key.add("element type", type_code<std::remove_cv_t<T>>())
      .add("accumulator type", type_code<Acc>())
      .add("algorithm", algorithm);
  collective_check(policy.comm, key, [&] {
    check_reduce(f, in, out);
    check_reduce_algorithm<plus, Acc>(f, algorithm);
  });
  *out = mpi_reduce(f, policy, array_source<Acc, std::remove_cv_t<T>>{in.data()}, static_cast<std::int64_t>(in.size()),
                    algorithm, plus{}, Acc(0));
}

template <class Acc, class Op, class... Ins>
void run(transform_reduce_sum_tag, const mpi& policy, Acc* out, reduce_algorithm algorithm, const Op& op,
         ::cuda::std::span<Ins>... ins) {
  const char* const f = "fusekit::transform_reduce_sum";
  std::int64_t n = 0;
  call_key key(f);
  key.add("input types", type_code<std::tuple<std::remove_cv_t<Ins>...>>())
      .add("accumulator type", type_code<Acc>())
      .add("op", type_code<Op>())
      .add("algorithm", algorithm);
  collective_check(policy.comm, key, [&] {
    n = check_transform_reduce(f, out, ins...);
    check_reduce_algorithm<plus, Acc>(f, algorithm);
  });
  *out = mpi_reduce(f, policy, make_transform_source<Acc>(no_throw(op), ins...), n, algorithm, plus{}, Acc(0));
}

template <class T, class Acc, class Op>
void run(reduce_tag, const mpi& policy, ::cuda::std::span<T> in, Acc* out, const Op& op, Acc init,
         reduce_algorithm algorithm) {
  call_key key("fusekit::reduce");
  key.add("element type", type_code<std::remove_cv_t<T>>())
      .add("accumulator type", type_code<Acc>())
      .add("op", type_code<Op>())
      .add("init", init)
      .add("algorithm", algorithm);
  collective_check(policy.comm, key, [&] {
    check_reduce_views("fusekit::reduce", in, out);
    check_reduce_algorithm<Op, Acc>("fusekit::reduce", algorithm);
  });
  *out = mpi_reduce("fusekit::reduce", policy, array_source<Acc, std::remove_cv_t<T>>{in.data()},
                    static_cast<std::int64_t>(in.size()), algorithm, no_throw(op), init);
}

template <class R, class Enqueue>
R run(scalar_result_tag, const mpi&, accumulate_in<R>, const Enqueue& enqueue) {
  R value{};
  enqueue(&value);
  return value;
}

template <class T>
fit_report run(fit_tag, const mpi& policy, matrix<const T> X, matrix<const T> Y, matrix<T> W, const gd_options& o) {
  const char* const f = "fusekit::fit";
  MPI_Comm const comm = policy.comm;
  expect_communicator(comm);
  int const ranks = mpi_size(comm);
  call_key key(f);
  key.add("element type", type_code<T>()).add("L (columns of X)", X.extent(1)).add("N (columns of Y)", Y.extent(1));
  add_options(key, o);
  cpu const local = fit_policy(policy.local, o, X.extent(0), X.extent(1), Y.extent(1));
  collective_check(comm, key, [&] { check_fit(X, Y, W, o, non_finite_counter<cpu>{local}, true); });
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
  if (o.progress) {
    collective.progress = [&o, comm, ranks](const fit_progress& now) {
      std::exception_ptr thrown;
      try {
        o.progress(now);
      } catch (...) { thrown = std::current_exception(); }
      int const mine = thrown ? mpi_rank(comm) : ranks;
      int first = ranks;
      FUSEKIT_MPI_TRY(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
      if (thrown) { std::rethrow_exception(thrown); }
      if (first < ranks) {
        throw std::runtime_error("fusekit::fit (mpi): the progress callback threw on rank " + std::to_string(first) +
                                 " at iteration " + std::to_string(now.iteration) + "; every rank stops there");
      }
    };
  }
  fit_report report = cpu_fit_checked(
      local, X, Y, W, collective, K,
      [&](auto* values, std::int64_t count) { ordered_allreduce_sum(comm, values, count); }, false);
  report.path = "mpi";
  return report;
}

template <class T>
void run(predict_tag, const mpi& policy, matrix<const T> X, matrix<const T> W, matrix<T> Y_hat) {
  run(predict_tag{}, policy.local, X, W, Y_hat);  // local: this rank's rows
}

}  // namespace detail
}  // namespace fusekit
