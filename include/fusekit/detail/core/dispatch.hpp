// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The one dispatch mechanism. A public function (`fusekit::transform`,
/// `reduce_sum`, `fit`, ...) calls `run_<algorithm>(<algorithm>_tag{},
/// policy, args...)` unqualified, once: the backend checks the arguments and
/// runs the call. A backend implements up to five hooks: `run_transform`,
/// `run_reduce` (every sum and reduction form reaches it,
/// detail/reduce/reduction.hpp), `run_segmented` (the sums per segment and per
/// row, detail/reduce/segments.hpp), `run_fit` and `run_predict`. Each backend defines its `run_<algorithm>` overload
/// for its own policy, next to its code: detail/<algorithm>/cpu.hpp for `fusekit::cpu`, detail/<algorithm>/cuda.cuh for
/// `fusekit::cuda`, in the algorithm's own namespace, so `run_fit(` finds every backend of `fit` and nothing else. Each
/// folder of detail/ is an inline namespace of fusekit::detail (detail::core, detail::reduce, ...): the tag lives in
/// detail::core, so argument-dependent lookup at instantiation searches
/// fusekit::detail and every folder's namespace, and finds the overloads of
/// every backend included by then; g++ never needs to see the CUDA ones. A
/// specialization of a core template (backend_available) sits in
/// fusekit::detail itself.

#include <fusekit/policy.hpp>

#include <type_traits>

namespace fusekit {
namespace detail {
inline namespace core {

struct transform_tag {};
/// run_reduce(reduce_tag, policy, reduction, algorithm_tag): every sum and
/// reduction (detail/reduce/reduction.hpp)
struct reduce_tag {};
/// run_segmented(segmented_tag, policy, segmented_reduction): the sums per
/// segment and per row (detail/reduce/segments.hpp)
struct segmented_tag {};
struct fit_tag {};
struct predict_tag {};

/// The execution policies: fusekit::cpu, fusekit::cuda and
/// fusekit::cuda_staged, and those an optional header adds (fusekit::mpi in
/// mpi.hpp) by specializing this.
template <class Policy>
struct is_execution_policy : std::bool_constant<std::is_same_v<Policy, cpu> || std::is_same_v<Policy, cuda> ||
                                                std::is_same_v<Policy, cuda_staged>> {};

template <class Policy>
inline constexpr bool is_policy_v = is_execution_policy<Policy>::value;

/// The GPU backend's two policies, `fusekit::cuda` (device memory) and
/// `fusekit::cuda_staged` (views anywhere): one hook per algorithm serves
/// both (detail/*/cuda.cuh). On cuda_staged it hands the call to the staged
/// route, `staged_<algorithm>(tag, ...)`, defined by detail/*/cuda_staged.cuh
/// (host_data.cuh), which `policy_usable` requires before any hook is reached.
template <class Policy>
inline constexpr bool is_gpu_policy_v = std::is_same_v<Policy, cuda> || std::is_same_v<Policy, cuda_staged>;

/// Whether the backend of `Policy` for algorithm `Tag` has been included:
/// each backend file (detail/*/cpu.hpp, detail/*/cuda.cuh, ...) says so for
/// its own algorithms. The .hpp public headers include the CPU's, the .cuh
/// ones the GPU's.
template <class Tag, class Policy>
struct backend_available : std::false_type {};

/// The check at every public entry point: one message that says what to do,
/// and (as the caller then skips the call) nothing after it.
template <class Tag, class Policy>
constexpr bool policy_usable() {
  static_assert(is_policy_v<Policy>,
                "fusekit: the first argument is the execution policy: use fusekit::cuda{stream} or fusekit::cpu{} "
                "(a Thrust or CUB execution policy is not one)");
  static_assert(!std::is_same_v<Policy, cuda_staged> || backend_available<Tag, Policy>::value,
                "fusekit::cuda_staged needs the host-data backend: include <fusekit/host_data.cuh> (or "
                "<fusekit/fusekit.cuh>) and compile this file with nvcc");
  static_assert(!std::is_same_v<Policy, cpu> || backend_available<Tag, Policy>::value,
                "fusekit::cpu needs the CPU backend: include the algorithm's .hpp header (<fusekit/reduce.hpp>, "
                "<fusekit/elementwise.hpp>, <fusekit/train.hpp>) or <fusekit/fusekit.hpp>");
  static_assert(!std::is_same_v<Policy, cuda> || backend_available<Tag, Policy>::value,
                "fusekit::cuda needs the GPU backend: include the algorithm's .cuh header (<fusekit/reduce.cuh>, "
                "<fusekit/elementwise.cuh>, <fusekit/train.cuh>) or <fusekit/fusekit.cuh>, and compile this file "
                "with nvcc (fit and predict: link fusekit::train)");
  return is_policy_v<Policy> && backend_available<Tag, Policy>::value;
}

}  // namespace core
}  // namespace detail
}  // namespace fusekit
