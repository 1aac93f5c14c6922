// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What fusekit::mpi's backend (detail/distributed/mpi.hpp) builds its
/// collectives from: MPI's names for the element types, the error check of
/// every MPI call, MPI's gather for the agreement every collective call makes
/// first (detail/distributed/agreement.hpp), the ranks' shard layout, and the
/// sum over the ranks in rank order.

#include <fusekit/detail/distributed/agreement.hpp>
#include <fusekit/detail/distributed/tree.hpp>
#include <fusekit/detail/core/dispatch.hpp>
#include <fusekit/detail/core/checks.hpp>
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

/// Throws `invalid_argument` unless comm is a communicator (MPI_COMM_NULL would
/// make MPI's default handler end the whole job).
inline void expect_communicator(MPI_Comm comm) {
  FUSEKIT_EXPECTS(comm != MPI_COMM_NULL,
                  "fusekit::mpi: comm is MPI_COMM_NULL; pass a communicator this process belongs to");
}

/// MPI's gather for the agreement (detail/distributed/agreement.hpp): every
/// rank's row, concatenated in rank order, on every rank.
struct mpi_gather {
  MPI_Comm comm;
  std::vector<std::int64_t> operator()(const std::vector<std::int64_t>& mine) const {
    std::vector<std::int64_t> all(mine.size() * static_cast<std::size_t>(mpi_size(comm)));
    FUSEKIT_MPI_TRY(MPI_Allgather(mine.data(), static_cast<int>(mine.size()), MPI_INT64_T, all.data(),
                                  static_cast<int>(mine.size()), MPI_INT64_T, comm));
    return all;
  }
};

/// This rank's checks and `key`, agreed across comm's ranks (agree()).
template <class Checks>
void collective_check(MPI_Comm comm, const call_key& key, const Checks& checks) {
  expect_communicator(comm);
  agree("fusekit::mpi", mpi_gather{comm}, key, checks);
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
