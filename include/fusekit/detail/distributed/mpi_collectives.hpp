// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What fusekit::mpi's backend (detail/distributed/mpi.hpp) builds its
/// collectives from: MPI's names for the element types, the error check of
/// every MPI call, the call key every rank gathers to check that it makes the
/// same call, collective argument checks, the ranks' shard layout, and the
/// sum over the ranks in rank order.

#include <fusekit/detail/distributed/tree.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/core/validate.hpp>
#include <fusekit/mpi_types.hpp>
#include <fusekit/reduce_types.hpp>
#include <fusekit/train_types.hpp>

#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {

// This file is a backend of every algorithm (see detail/core/dispatch.hpp).
template <>
struct is_execution_policy<mpi> : std::true_type {};
template <class Tag>
struct backend_available<Tag, mpi> : std::true_type {};

inline namespace distributed {

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

/// Every field of gd_options, by name, in declaration order: the one list
/// the agreement key is made of (a callback's presence, not its target).
template <class F>
void for_each_option(const gd_options& o, const F& f) {
  f("learning_rate", o.learning_rate.has_value() ? *o.learning_rate : -1.0);
  f("tolerance", o.tolerance.has_value() ? *o.tolerance : -1.0);
  f("relative_tolerance", o.relative_tolerance);
  f("max_iterations", o.max_iterations);
  f("init", o.init);
  f("seed", o.seed);
  f("method", o.method);
  f("formulation", o.formulation);
  f("preconditioner", o.preconditioner);
  f("stall_window", o.stall_window);
  f("progress (set or not)", static_cast<bool>(o.progress));
  f("progress_every", o.progress_every);
  f("refinement_steps", o.refinement_steps);
  f("ridge", o.ridge);
  f("fit_intercept", o.fit_intercept);
}

/// gd_options's fields as for_each_option lists them: a field added to
/// gd_options and not here changes its size, and the check below fails to
/// compile until both lists have it.
struct listed_options {
  std::optional<double> learning_rate, tolerance;
  double relative_tolerance;
  std::int64_t max_iterations;
  gd_init init;
  std::uint64_t seed;
  gd_method method;
  gd_formulation formulation;
  gd_preconditioner preconditioner;
  std::int64_t stall_window;
  std::function<void(const fit_progress&)> progress;
  std::int64_t progress_every, refinement_steps;
  double ridge;
  bool fit_intercept;
};
static_assert(sizeof(listed_options) == sizeof(gd_options),
              "a gd_options field is missing from for_each_option (mpi_collectives.hpp): every rank must agree on it");

/// The options every rank of a fit must share.
inline void add_options(call_key& key, const gd_options& o) {
  for_each_option(o, [&](const char* name, const auto& value) { key.add(name, value); });
}

/// A hash of n values' bytes (FNV-1a): for values every rank must pass alike
/// (a warm start), compared without sending them.
template <class T>
std::int64_t bytes_hash(const T* values, std::int64_t n) {
  std::uint64_t h = 1469598103934665603ull;
  if (values == nullptr) { return 0; }  // the checks name a null view
  const auto* const b = reinterpret_cast<const unsigned char*>(values);
  for (std::int64_t i = 0; i < n * static_cast<std::int64_t>(sizeof(T)); ++i) { h = (h ^ b[i]) * 1099511628211ull; }
  return static_cast<std::int64_t>(h);
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

}  // namespace distributed
}  // namespace detail
}  // namespace fusekit
