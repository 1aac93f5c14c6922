// SPDX-License-Identifier: Apache-2.0
// fit and predict given std::vectors: one message that says how to wrap them
// (fusekit::matrix<const double>(X.data(), K, L)), no overload cascade.
#include <fusekit/fusekit.hpp>

#include <vector>

int main() {
  std::vector<double> X(12), Y(4), W(3), Y_hat(4);
  (void)fusekit::fit(fusekit::cpu{}, X, Y, W);
  fusekit::predict(fusekit::cpu{}, X, W, Y_hat);
}
