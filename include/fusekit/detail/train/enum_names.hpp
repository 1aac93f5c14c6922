// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// `to_string` of the trainer's enums (train_types.hpp): for messages and
/// tables; the names are the enumerators' own.

#include <fusekit/detail/core/enum_name.hpp>

namespace fusekit {

// The enums of train_types.hpp, declared (scoped: int underneath), so that
// this file compiles on its own; train_types.hpp includes it at its end.
enum class fit_status : int;
enum class gd_method;
enum class gd_preconditioner;
enum class stop_rule : int;
enum class gd_formulation;
enum class gd_init;
enum class fit_path;

/// The status's name: "converged", "max_iterations", "diverged" or "stalled".
constexpr const char* to_string(fit_status s) {
  constexpr const char* names[] = {"converged", "max_iterations", "diverged", "stalled"};
  return detail::enum_name(names, s);
}

/// The method's name: "plain", "nesterov" or "conjugate_gradient".
constexpr const char* to_string(gd_method m) {
  constexpr const char* names[] = {"plain", "nesterov", "conjugate_gradient"};
  return detail::enum_name(names, m);
}

/// The preconditioner's name: "none", "jacobi" or "cholesky".
constexpr const char* to_string(gd_preconditioner p) {
  constexpr const char* names[] = {"none", "jacobi", "cholesky"};
  return detail::enum_name(names, p);
}

/// The rule's name, as the enumerator is spelled.
constexpr const char* to_string(stop_rule r) {
  constexpr const char* names[] = {"none",       "tolerance", "relative_tolerance", "max_iterations",
                                   "non_finite", "growth",    "rounding_floor"};
  return detail::enum_name(names, r);
}

/// The formulation's name: "automatic", "direct" or "gram".
constexpr const char* to_string(gd_formulation f) {
  constexpr const char* names[] = {"automatic", "direct", "gram"};
  return detail::enum_name(names, f);
}

/// The start's name: "zeros", "warm_start" or "uniform".
constexpr const char* to_string(gd_init i) {
  constexpr const char* names[] = {"zeros", "warm_start", "uniform"};
  return detail::enum_name(names, i);
}

/// The path's name: "cpu", "single_launch", "cublas", "mpi",
/// "nccl/single_launch" or "nccl/cublas".
constexpr const char* to_string(fit_path p) {
  constexpr const char* names[] = {"cpu", "single_launch", "cublas", "mpi", "nccl/single_launch", "nccl/cublas"};
  return detail::enum_name(names, p);
}

}  // namespace fusekit
