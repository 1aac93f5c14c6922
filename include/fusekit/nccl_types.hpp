// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The NCCL policy's type, `fusekit::nccl` (fusekit::cuda on every rank of an NCCL
/// communicator). Include <fusekit/nccl.cuh> to call the algorithms with it;
/// that header says what each one communicates.
///
///     ncclComm_t comm;   // one rank per GPU: ncclCommInitRank, or ncclCommInitAll
///     fusekit::nccl const gpus{comm, fusekit::cuda{stream}};

#include <fusekit/policy.hpp>

#include <nccl.h>

#include <cstdint>

namespace fusekit {

/// fusekit::cuda on every rank of an NCCL communicator (see the file comment).
struct nccl {
  ncclComm_t comm = nullptr;  ///< the ranks, one GPU each
  cuda local{};               ///< this rank's GPU policy: stream and resources
  std::int64_t offset = -1;   ///< this rank's first global index; −1: after the lower ranks' shards

  /// No communicator yet: set `comm` before a call (NCCL fails on a null one,
  /// and the call throws cuda_error).
  nccl() = default;
  /// Communicator `c`, this rank's GPU policy `l`, its shard at `first`.
  explicit nccl(ncclComm_t c, cuda l = {}, std::int64_t first = -1) : comm(c), local(l), offset(first) {}
  /// This policy with this rank's shard at global index `first`.
  [[nodiscard]] nccl at(std::int64_t first) const { return nccl(comm, local, first); }
};

}  // namespace fusekit
