// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// Error reporting: exceptions and checking macros.
///
/// * `fusekit::invalid_argument` — a precondition on an argument failed. Thrown
///   before anything is launched or written; the message names the argument and
///   the constraint.
/// * `fusekit::cuda_error` — a CUDA runtime call, or a CUDA library call
///   (cuBLAS), failed. Carries the error code (or the library's status and its
///   name), the call text, file and line.
///
/// `FUSEKIT_CUDA_TRY(call)` throws `cuda_error` when `call` does not return
/// `cudaSuccess` (and clears the error so the next call starts clean);
/// `FUSEKIT_CUDA_TRY_NO_THROW(call)` reports to stderr instead (for destructors);
/// `FUSEKIT_CHECK_LAUNCH()` checks the kernel launch just made;
/// `FUSEKIT_EXPECTS(cond, msg)` throws `invalid_argument(msg)` unless `cond`.
///
/// An argument's message names the function, the argument with the value it
/// had, and the constraint it broke, e.g. "fusekit::fit: max_iterations is 0;
/// it must be at least 1". A
/// CUDA failure reads "fusekit: CUDA call '<call>' failed at <file>:<line>:
/// <error name> (<error string>)". The MPI policy throws `fusekit::mpi_error`
/// (mpi_types.hpp) in the same form.
///
///     try {
///       fusekit::fit(fusekit::cuda{stream}, X, Y, W, options);
///     } catch (const fusekit::invalid_argument& e) {   // a bad argument: nothing ran
///     } catch (const fusekit::cuda_error& e) {         // the device failed: e.code()
///     }
///
/// Both derive from the standard exceptions (std::invalid_argument and
/// std::runtime_error), so code that catches those catches fusekit's too.

#include <fusekit/config.hpp>

#if FUSEKIT_HAS_CUDA_HEADERS
#include <cuda_runtime_api.h>
#endif

#include <cstdio>
#include <stdexcept>
#include <string>

namespace fusekit {

/// A precondition on an argument failed; nothing was launched or written.
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A CUDA runtime call, or a call of a CUDA library (cuBLAS), failed.
class cuda_error : public std::runtime_error {
 public:
#if FUSEKIT_HAS_CUDA_HEADERS
  /// A CUDA runtime call returned `code`.
  cuda_error(cudaError_t code, const char* call, const char* file, int line)
      : std::runtime_error(format("CUDA", cudaGetErrorName(code), cudaGetErrorString(code), call, file, line)),
        code_(static_cast<int>(code)) {}
#endif

  /// A call of CUDA library `library` ("cuBLAS") returned `status`, named `status_name`.
  cuda_error(const char* library, int status, const char* status_name, const char* description, const char* call,
             const char* file, int line)
      : std::runtime_error(format(library, status_name, description, call, file, line)), library_status_(status) {}

#if FUSEKIT_HAS_CUDA_HEADERS
  /// The CUDA runtime's error code; `cudaErrorUnknown` when a library call failed.
  [[nodiscard]] cudaError_t code() const noexcept { return static_cast<cudaError_t>(code_); }
#endif
  /// The library's status code when a library call failed (e.g. a `cublasStatus_t`), else 0.
  [[nodiscard]] int library_status() const noexcept { return library_status_; }

 private:
  static std::string format(const char* library, const char* name, const char* description, const char* call,
                            const char* file, int line) {
    return std::string("fusekit: ") + library + " call '" + call + "' failed at " + file + ":" + std::to_string(line) +
           ": " + name + " (" + description + ")";
  }
  int code_ = 999;  // cudaErrorUnknown
  int library_status_ = 0;
};

}  // namespace fusekit

/// Throws `fusekit::cuda_error` when `call` (a CUDA runtime call) does not
/// return `cudaSuccess`, after clearing a non-sticky error so that the next
/// call starts clean.
#define FUSEKIT_CUDA_TRY(call)                                                 \
  do {                                                                         \
    cudaError_t const fusekit_status_ = (call);                                \
    if (fusekit_status_ != cudaSuccess) {                                      \
      (void)cudaGetLastError(); /* clear a non-sticky error */                 \
      throw ::fusekit::cuda_error(fusekit_status_, #call, __FILE__, __LINE__); \
    }                                                                          \
  } while (0)

/// FUSEKIT_CUDA_TRY for destructors and other places that must not throw:
/// prints the failure to stderr and goes on.
#define FUSEKIT_CUDA_TRY_NO_THROW(call)                                                                \
  do {                                                                                                 \
    cudaError_t const fusekit_status_ = (call);                                                        \
    if (fusekit_status_ != cudaSuccess) {                                                              \
      (void)cudaGetLastError();                                                                        \
      std::fprintf(stderr, "fusekit: CUDA call '%s' failed at %s:%d: %s\n", #call, __FILE__, __LINE__, \
                   cudaGetErrorName(fusekit_status_));                                                 \
    }                                                                                                  \
  } while (0)

/// Checks the launch just made (configuration errors surface here; errors of the
/// kernel's execution surface at the next synchronizing call).
#define FUSEKIT_CHECK_LAUNCH() FUSEKIT_CUDA_TRY(cudaPeekAtLastError())

/// Throws `fusekit::invalid_argument(msg)` unless `cond`: the one way every
/// argument check fails, so that each does before anything runs.
#define FUSEKIT_EXPECTS(cond, msg)                           \
  do {                                                       \
    if (!(cond)) { throw ::fusekit::invalid_argument(msg); } \
  } while (0)
