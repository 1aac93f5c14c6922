// SPDX-License-Identifier: Apache-2.0
#pragma once
// The calls the module makes (calls.hpp defines them; cpu_*.cpp and cuda_*.cu
// instantiate them for fusekit::cpu and fusekit::cuda), declared without
// fusekit's algorithms so that module.cpp compiles quickly.

#include "arrays.hpp"

#include <fusekit/policy.hpp>
#include <fusekit/reduce_types.hpp>
#include <fusekit/train_types.hpp>

#include <cstdint>

namespace fusekit_python {

/// A reduction's operation.
enum class reduce_op : int { sum = 0, min = 1, max = 2 };

/// An initial value, in the accumulator's kind (module.cpp fills the one it uses).
struct scalar {
  double real = 0;
  std::int64_t signed_int = 0;
  std::uint64_t unsigned_int = 0;
};

template <class Policy>
void hidden_layer(const Policy& policy, const view& grey, const view& w, const view& out, double scale, bool fused);
template <class Policy>
void transform(const Policy& policy, int code, const view& x, const view* w, const view& out, double scale);
template <class Policy>
void reduce(const Policy& policy, const view& in, const view& out, reduce_op op, const scalar* init,
            fusekit::reduce_algorithm algorithm);
/// out[s] = Σ values over segment s of the int32 or int64 `offsets`
/// (fusekit::segmented_sum), and out[r] = Σ of row r of X (fusekit::row_sums):
/// on fusekit::cpu, the one backend these have so far (cpu_reduce.cpp).
void segmented_sum_cpu(const view& values, const view& offsets, const view& out);
void row_sums_cpu(const view& X, const view& out);
template <class Policy>
fusekit::fit_report fit(const Policy& policy, const view& X, const view& Y, const view& W,
                        const fusekit::gd_options& options, const view* sample_weight, const view* intercept);
template <class Policy>
void predict(const Policy& policy, const view& X, const view& W, const view* intercept, const view& Y_hat);

}  // namespace fusekit_python
