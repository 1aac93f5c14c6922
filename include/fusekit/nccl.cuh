// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// fusekit across GPUs with NCCL (CMake component `fusekit::nccl`: fusekit,
/// cuBLAS and NCCL). One rank per GPU, each with its shard in device memory.
///
///     fusekit::nccl const gpus{comm, fusekit::cuda{stream}};   // ncclComm_t, this rank's stream
///     float s = fusekit::sum(gpus, my_shard, fusekit::reduce_algorithm::deterministic);
///     fusekit::fit_report r = fusekit::fit(gpus, my_X_rows, my_Y_rows, W, options);
///
/// `fusekit::nccl{comm, local, offset}` is to `fusekit::cuda` what
/// `fusekit::mpi` is to `fusekit::cpu` (see mpi.hpp for the shards, the
/// offsets and collective errors); every NCCL call runs on `local.stream`.
///
/// * `deterministic` sums and transform_reduces: the same algorithm as over
///   MPI (detail/distributed/tree.hpp): heads to their tiles' owners
///   (ncclSend/ncclRecv), each rank's tiles by the tree kernel, the tile
///   results broadcast by their owners, the upper levels on every GPU. The
///   bits of the single-GPU sum over the concatenated data, and of the CPU's,
///   on every rank, for any number of GPUs and any split.
/// * The other algorithms: the GPU sum of each shard, then ncclAllReduce.
/// * `fit`: XᵀX and YᵀX of each rank's rows are summed by ncclAllReduce once,
///   and every GPU iterates the same L × L system (Gram). The direct
///   formulation, and CGLS where the Cholesky factor of `recommended()` leaves
///   A, keep each rank's rows and allreduce per iteration what sums over rows:
///   the gradient Xᵀ(…) (L × N) and, for CGLS, each output's qᵀq; the
///   formulation is chosen from every rank's rows. NCCL gives every rank the
///   same reduced bits, so every rank ends with the same W and statuses, and
///   one rank gives the single GPU's bits. Ridge,
///   intercepts and sample weights (fit_extras, each rank's in device memory;
///   a rank without rows passes none) are prepared as on fusekit::mpi: the
///   means and ranges summed over the ranks in rank order, rank 0 adds the
///   ridge's rows (detail/train/cuda_prepare.cuh).
/// * `transform` and `predict` are local to each rank.
///
/// Views are device memory (host data: move it with fusekit::cuda first).
/// Tested on one GPU with a one-rank communicator (tests/distributed/nccl_test.cu); several GPUs
/// wait for a machine that has them.

#include <fusekit/fusekit.cuh>
#include <fusekit/nccl_types.hpp>
#include <fusekit/detail/distributed/nccl.cuh>
