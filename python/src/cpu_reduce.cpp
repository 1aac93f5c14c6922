// SPDX-License-Identifier: Apache-2.0
// The package's reduce calls on fusekit::cpu (calls.hpp).
#include "calls.hpp"

namespace fusekit_python {
FUSEKIT_PYTHON_REDUCE(fusekit::cpu);

void segmented_sum_cpu(const view& values, const view& offsets, const view& out) {
  with_accumulator(values, out, [&](auto it, auto at) {
    using T = typename decltype(it)::type;
    using Acc = typename decltype(at)::type;
    if (offsets.type == dtype::i64) {
      fusekit::segmented_sum(fusekit::cpu{}, in_span<T>(values), in_span<std::int64_t>(offsets), out_span<Acc>(out));
    } else if (offsets.type == dtype::i32) {
      fusekit::segmented_sum(fusekit::cpu{}, in_span<T>(values), in_span<std::int32_t>(offsets), out_span<Acc>(out));
    } else {
      throw type_error(std::string("offsets is ") + dtype_name(offsets.type) + "; it must be int64 or int32");
    }
  });
}

void row_sums_cpu(const view& X, const view& out) {
  with_accumulator(X, out, [&](auto it, auto at) {
    using T = typename decltype(it)::type;
    using Acc = typename decltype(at)::type;
    fusekit::row_sums(fusekit::cpu{}, fusekit::matrix<const T>(X.as<const T>(), X.rows, X.cols), out_span<Acc>(out));
  });
}
}  // namespace fusekit_python
