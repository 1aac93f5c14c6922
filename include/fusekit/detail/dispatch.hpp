// SPDX-License-Identifier: Apache-2.0
#pragma once
/// \file
/// The one dispatch mechanism. A public function (`fusekit::transform`,
/// `reduce_sum`, `fit`, ...) calls `run(<algorithm>_tag{}, policy, args...)`
/// unqualified. Each backend defines its `run` overloads for its own policy,
/// next to its code: cpu/<algorithm>.hpp for `fusekit::cpu`,
/// cuda/<algorithm>.cuh for `fusekit::cuda`. The tag lives in this namespace, so
/// argument-dependent lookup at instantiation finds the overloads of every
/// backend included by then, and g++ never needs to see the CUDA ones.

namespace fusekit {
namespace detail {

struct transform_tag {};
struct reduce_sum_tag {};
struct reduce_tag {};
struct transform_reduce_sum_tag {};
struct scalar_result_tag {};  ///< run(scalar_result_tag, policy, enqueue): a host value from a call writing *out
struct fit_tag {};
struct predict_tag {};

}  // namespace detail
}  // namespace fusekit
