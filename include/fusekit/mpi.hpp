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
///   after that (detail/distributed/tree.hpp).
/// * `naive_atomic`, `block_atomic` and `run_to_run` reduce each shard as on one CPU,
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
/// * `transform`, `predict`, `segmented_sum` and `row_sums` are local: each
///   rank's elements, rows or segments (rows sharded), no communication; each
///   segment's sum has the bits of the single sum over it, on any rank count.
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
#include <fusekit/mpi_types.hpp>
#include <fusekit/detail/distributed/mpi.hpp>
