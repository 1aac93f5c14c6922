// SPDX-License-Identifier: Apache-2.0
// The GPU trainer's test helpers (tests/train/cuda_*_test.cu): the user's
// shape of problem, a fit on the device down a chosen path, and two fits
// compared as the same iterates up to rounding.
#pragma once

#include <fusekit/fusekit.cuh>
#include <fusekit/train.cuh>

#include "common/device_buffer.cuh"
#include "common/train_problem.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fusekit::test {

// The user's shape of problem: X uniform [0, 1), Y = X W_trueᵀ exactly.
template <class T>
problem<T> make_problem(std::int64_t K, std::int64_t L, std::int64_t N, std::uint32_t seed) {
  return make_problem<T>(K, L, N, seed, true, 0.0);
}

// path: 0 automatic, 1 single launch, 2 cuBLAS.
template <class T>
fusekit::fit_report gpu_fit(const problem<T>& p, std::vector<T>& W, const fusekit::gd_options& o, int path) {
  device_buffer<T> X(p.X), Y(p.Y), dW(static_cast<std::size_t>(p.N * p.L));
  W.assign(static_cast<std::size_t>(p.N * p.L), T(0));
  dW.copy_from(W);
  fusekit::matrix<const T> const Xd(X.data(), p.K, p.L), Yd(Y.data(), p.K, p.N);
  fusekit::matrix<T> const Wd(dW.data(), p.N, p.L);
  auto const r =
      path == 0 ? fusekit::detail::cuda_fit(fusekit::cuda{}, Xd, Yd, Wd, o)
                : fusekit::detail::cuda_fit(fusekit::cuda{}, Xd, Yd, Wd, o, fusekit::detail::fixed_path{path == 1});
  W = dW.to_host();
  return r;
}

template <class T>
void expect_same_fit(const fusekit::fit_report& a, const std::vector<T>& Wa, const fusekit::fit_report& b,
                     const std::vector<T>& Wb, double w_tol) {
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  EXPECT_NEAR(a.learning_rate, b.learning_rate, 1e-6 * b.learning_rate);
  for (std::size_t n = 0; n < a.outputs.size(); ++n) {
    EXPECT_EQ(a.outputs[n].status, b.outputs[n].status) << n;
    // Same iterates up to rounding: iteration counts within 1%.
    EXPECT_NEAR(static_cast<double>(a.outputs[n].iterations), static_cast<double>(b.outputs[n].iterations),
                2 + 0.01 * static_cast<double>(b.outputs[n].iterations))
        << n;
  }
  for (std::size_t i = 0; i < Wa.size(); ++i) { EXPECT_NEAR(Wa[i], Wb[i], w_tol) << i; }
}

}  // namespace fusekit::test
