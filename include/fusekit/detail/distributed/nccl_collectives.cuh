// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// What fusekit::nccl's backend (detail/distributed/nccl.cuh) builds its
/// collectives from: NCCL's names for the element types, the error check of
/// every NCCL call, a host gather over the communicator, and the agreement
/// every collective call makes first, over that gather
/// (detail/distributed/agreement.hpp, the code fusekit::mpi uses too).

#include <fusekit/detail/core/cuda_buffer.cuh>
#include <fusekit/detail/distributed/agreement.hpp>
#include <fusekit/error.hpp>
#include <fusekit/nccl_types.hpp>

#include <nccl.h>

#include <cstdint>
#include <type_traits>
#include <vector>

namespace fusekit {
namespace detail {
inline namespace distributed {

#define FUSEKIT_NCCL_TRY(call)                                                                               \
  do {                                                                                                       \
    ncclResult_t const fusekit_nccl_status_ = (call);                                                        \
    if (fusekit_nccl_status_ != ncclSuccess) {                                                               \
      throw ::fusekit::cuda_error("NCCL", static_cast<int>(fusekit_nccl_status_),                            \
                                  ncclGetErrorString(fusekit_nccl_status_), "ncclResult_t", #call, __FILE__, \
                                  __LINE__);                                                                 \
    }                                                                                                        \
  } while (0)

template <class T>
ncclDataType_t nccl_type() {
  if constexpr (std::is_same_v<T, float>) {
    return ncclFloat32;
  } else if constexpr (std::is_same_v<T, double>) {
    return ncclFloat64;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    return ncclInt64;
  } else {
    static_assert(std::is_same_v<T, std::uint64_t>, "fusekit::nccl: float, double, int64_t or uint64_t");
    return ncclUint64;
  }
}

inline int nccl_rank(const nccl& p) {
  int r = 0;
  FUSEKIT_NCCL_TRY(ncclCommUserRank(p.comm, &r));
  return r;
}

inline int nccl_size(const nccl& p) {
  int s = 0;
  FUSEKIT_NCCL_TRY(ncclCommCount(p.comm, &s));
  return s;
}

/// `count` values of T from every rank, gathered on every rank (host vectors in, out).
template <class T>
std::vector<T> nccl_allgather_host(const nccl& p, const std::vector<T>& mine) {
  int const ranks = nccl_size(p);
  stream_buffer<T> const d(p.local, static_cast<std::int64_t>(mine.size()) * (ranks + 1));
  T* const send = d.get() + mine.size() * static_cast<std::size_t>(ranks);
  cudaStream_t const s = p.local.stream;
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(send, mine.data(), mine.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  FUSEKIT_NCCL_TRY(ncclAllGather(send, d.get(), mine.size(), nccl_type<T>(), p.comm, s));
  std::vector<T> all(mine.size() * static_cast<std::size_t>(ranks));
  FUSEKIT_CUDA_TRY(cudaMemcpyAsync(all.data(), d.get(), all.size() * sizeof(T), cudaMemcpyDeviceToHost, s));
  FUSEKIT_CUDA_TRY(cudaStreamSynchronize(s));
  return all;
}

/// NCCL's gather for the agreement (detail/distributed/agreement.hpp): every
/// rank's row, concatenated in rank order, on every rank.
struct nccl_gather {
  const nccl* p;
  std::vector<std::int64_t> operator()(const std::vector<std::int64_t>& mine) const {
    return nccl_allgather_host(*p, mine);
  }
};

/// This rank's checks and `key`, agreed across the communicator's ranks (agree()).
template <class Checks>
void nccl_collective_check(const nccl& p, const call_key& key, const Checks& checks) {
  agree("fusekit::nccl", nccl_gather{&p}, key, checks);
}

}  // namespace distributed
}  // namespace detail
}  // namespace fusekit
