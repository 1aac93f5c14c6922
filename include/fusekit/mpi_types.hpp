// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The MPI policy's types: `fusekit::mpi` (fusekit::cpu on every rank of
/// a communicator) and `fusekit::mpi_error`. Include <fusekit/mpi.hpp> to
/// call the algorithms with it; that header says what each one communicates.
///
///     MPI_Init(&argc, &argv);
///     fusekit::mpi const world{MPI_COMM_WORLD};               // threads per rank: world.local
///     fusekit::mpi const placed = world.at(first_global_row);  // shards at given offsets
///
/// MPI's C API is all fusekit uses; its deprecated C++ bindings are switched
/// off before <mpi.h> (OMPI_SKIP_MPICXX, MPICH_SKIP_MPICXX), unless the
/// including code decided that first.

#include <fusekit/policy.hpp>

// The C API only: MPI's deprecated C++ bindings are not needed (and warn).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace fusekit {

/// An MPI call that failed: MPI's error string and code, the call and where
/// it was made (as `cuda_error` for the CUDA libraries). MPI's default handler
/// aborts the job first; a communicator whose handler returns errors
/// (`MPI_ERRORS_RETURN`) gets this exception instead.
class mpi_error : public std::runtime_error {
 public:
  /// MPI call `call` returned `code` at `file`:`line`; the message reads
  /// "fusekit: MPI error <code> (<MPI_Error_string>) in '<call>' at <file>:<line>".
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

/// fusekit::cpu on every rank of `comm`, combined through MPI (mpi.hpp): every
/// rank calls the same algorithm with its own shard, and every rank gets the
/// whole result.
struct mpi {
  MPI_Comm comm = MPI_COMM_WORLD;  ///< the ranks (MPI_COMM_NULL is rejected by every call)
  cpu local{};                     ///< each rank's own CPU policy (threads)
  std::int64_t offset = -1;        ///< this rank's first global index; −1: after the lower ranks' shards

  /// MPI_COMM_WORLD, the default CPU policy, shards after the lower ranks'.
  mpi() = default;
  /// Communicator `c`, CPU policy `l` on each rank, this rank's shard at `first`.
  explicit mpi(MPI_Comm c, cpu l = {}, std::int64_t first = -1) : comm(c), local(l), offset(first) {}

  /// This policy with this rank's shard at global index `first`.
  [[nodiscard]] mpi at(std::int64_t first) const { return mpi(comm, local, first); }
};

}  // namespace fusekit
