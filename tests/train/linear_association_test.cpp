// SPDX-License-Identifier: Apache-2.0
// linear_association: the model object is a thin owner over fit and predict,
// so it gives their results bit for bit, keeps W and the last report, and
// checks its own shape arguments.
#include <fusekit/fusekit.hpp>
#include <fusekit/linear_association.hpp>

#include "common/train_problem.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace {

template <class T>
using cmatrix = fusekit::matrix<const T>;

TEST(LinearAssociation, FitAndPredictAreTheFreeFunctionsBitForBit) {
  auto const p = fusekit::test::make_problem<double>(300, 12, 4, 5, true, 0.0);
  fusekit::gd_options o;
  o.method = fusekit::gd_method::nesterov;
  o.tolerance = 1e-12;

  fusekit::linear_association<double> net(p.L, p.N, o);
  EXPECT_TRUE(net.last_report().outputs.empty());
  fusekit::fit_report const r = net.fit(cmatrix<double>(p.X.data(), p.K, p.L), cmatrix<double>(p.Y.data(), p.K, p.N));

  std::vector<double> W(static_cast<std::size_t>(p.N * p.L), 0.0);
  fusekit::fit_report const free =
      fusekit::fit(fusekit::cpu{}, cmatrix<double>(p.X.data(), p.K, p.L), cmatrix<double>(p.Y.data(), p.K, p.N),
                   fusekit::matrix<double>(W.data(), p.N, p.L), o);
  ASSERT_EQ(r.outputs.size(), free.outputs.size());
  for (std::size_t n = 0; n < r.outputs.size(); ++n) {
    EXPECT_EQ(r.outputs[n].iterations, free.outputs[n].iterations);
    EXPECT_EQ(r.outputs[n].status, fusekit::fit_status::converged);
  }
  auto const weights = net.weights();
  ASSERT_EQ(weights.extent(0), p.N);
  ASSERT_EQ(weights.extent(1), p.L);
  for (std::int64_t i = 0; i < p.N * p.L; ++i) { EXPECT_EQ(weights.data_handle()[i], W[static_cast<std::size_t>(i)]); }
  EXPECT_EQ(net.last_report().learning_rate, free.learning_rate);

  std::vector<double> a(static_cast<std::size_t>(p.K * p.N)), b(a.size());
  net.predict(cmatrix<double>(p.X.data(), p.K, p.L), fusekit::matrix<double>(a.data(), p.K, p.N));
  fusekit::predict(fusekit::cpu{}, cmatrix<double>(p.X.data(), p.K, p.L), cmatrix<double>(W.data(), p.N, p.L),
                   fusekit::matrix<double>(b.data(), p.K, p.N));
  EXPECT_EQ(a, b);
  for (std::size_t i = 0; i < a.size(); ++i) { EXPECT_NEAR(a[i], p.Y[i], 1e-4) << i; }
}

TEST(LinearAssociation, OptionsAreKeptAndShapesChecked) {
  fusekit::linear_association<float> net(3, 2);
  net.options().max_iterations = 7;
  net.options().learning_rate = 0.1;
  std::vector<float> X(3 * 5, 1.0f), Y(2 * 5, 1.0f);
  auto const r = net.fit(cmatrix<float>(X.data(), 5, 3), cmatrix<float>(Y.data(), 5, 2));
  EXPECT_LE(r.most_iterations(), 7);
  EXPECT_EQ(net.inputs(), 3);
  EXPECT_EQ(net.outputs(), 2);
  try {
    fusekit::linear_association<float> bad(3, 0);
    ADD_FAILURE() << "0 outputs accepted";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("outputs (N) is 0"), std::string::npos) << e.what();
  }
  // X or Y (Y_hat) of another shape than the model's: the message names what
  // the user gave and the model's L and N, never the model's own W, and W is
  // left as it was.
  auto const expect_message = [](const auto& call, const std::string& text) {
    try {
      call();
      ADD_FAILURE() << "accepted; expected: " << text;
    } catch (const fusekit::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("W "), std::string::npos) << e.what();
    }
  };
  std::vector<float> const W_before(net.weights().data_handle(), net.weights().data_handle() + 6);
  std::vector<float> Y3(3 * 5, 1.0f), X4(4 * 5, 1.0f);
  expect_message([&] { net.fit(cmatrix<float>(X.data(), 5, 3), cmatrix<float>(Y3.data(), 5, 3)); },
                 "fusekit::linear_association::fit: Y has 3 columns but the model has N = 2 outputs "
                 "(it was built as linear_association(3, 2))");
  expect_message([&] { net.fit(cmatrix<float>(X4.data(), 5, 4), cmatrix<float>(Y.data(), 5, 2)); },
                 "fit: X has 4 columns but the model has L = 3 inputs");
  expect_message([&] { net.predict(cmatrix<float>(X4.data(), 5, 4), fusekit::matrix<float>(Y.data(), 5, 2)); },
                 "predict: X has 4 columns but the model has L = 3 inputs");
  expect_message([&] { net.predict(cmatrix<float>(X.data(), 5, 3), fusekit::matrix<float>(Y3.data(), 5, 3)); },
                 "predict: Y_hat has 3 columns but the model has N = 2 outputs");
  EXPECT_EQ(std::vector<float>(net.weights().data_handle(), net.weights().data_handle() + 6), W_before);
}

// The model leads with the method for real data: its default options are
// gd_options::recommended(), which solve raw-unit data the seed's defaults cannot.
TEST(LinearAssociation, DefaultIsTheRecommendedMethodAndSolvesRawUnitData) {
  auto const p = fusekit::test::make_raw_problem<double>(442, 11, 3, 41, 0.1);
  fusekit::linear_association<double> net(p.L, p.N);
  EXPECT_EQ(net.options().method, fusekit::gd_method::conjugate_gradient);
  EXPECT_EQ(net.options().preconditioner, fusekit::gd_preconditioner::cholesky);
  EXPECT_EQ(net.options().relative_tolerance, fusekit::gd_options::recommended().relative_tolerance);
  auto const r = net.fit(cmatrix<double>(p.X.data(), p.K, p.L), cmatrix<double>(p.Y.data(), p.K, p.N));
  ASSERT_TRUE(r.all_converged());
  auto const w = net.weights();
  std::vector<double> const W(w.data_handle(), w.data_handle() + p.N * p.L);
  EXPECT_LE(fusekit::test::relative_error(W, fusekit::test::least_squares_reference(p)), 1e-8);
}

// scikit-learn's LinearRegression().fit(X, y, sample_weight) on the model:
// the intercepts are the weighted means' difference, predict adds them, and
// doubling every weight changes nothing (a weight is that many copies of its row).
TEST(LinearAssociation, FitsAnInterceptWithSampleWeights) {
  auto p = fusekit::test::make_problem<double>(300, 4, 2, 43, false, 0.0);
  double const offset[2] = {5.0, -3.0};
  for (std::int64_t k = 0; k < p.K; ++k) {
    for (std::int64_t n = 0; n < 2; ++n) { p.Y[k * 2 + n] += offset[n]; }
  }
  std::vector<double> s(static_cast<std::size_t>(p.K));
  for (std::int64_t k = 0; k < p.K; ++k) { s[k] = 0.5 + static_cast<double>(k % 3); }
  fusekit::linear_association<double> net(p.L, 2);
  net.options().fit_intercept = true;
  auto const r = net.fit(cmatrix<double>(p.X.data(), p.K, p.L), cmatrix<double>(p.Y.data(), p.K, 2), s);
  ASSERT_TRUE(r.all_converged()) << r.summary();
  for (std::int64_t n = 0; n < 2; ++n) { EXPECT_NEAR(net.intercepts()[n], offset[n], 1e-10); }  // Y is exact
  for (std::int64_t i = 0; i < 2 * p.L; ++i) { EXPECT_NEAR(net.weights().data_handle()[i], p.W_true[i], 1e-10); }
  std::vector<double> Y_hat(static_cast<std::size_t>(p.K * 2));
  net.predict(cmatrix<double>(p.X.data(), p.K, p.L), fusekit::matrix<double>(Y_hat.data(), p.K, 2));
  for (std::size_t i = 0; i < Y_hat.size(); ++i) { EXPECT_NEAR(Y_hat[i], p.Y[i], 1e-9 * (1 + std::fabs(p.Y[i]))); }
  std::vector<double> const b = net.intercepts();
  std::vector<double> twice = s;
  for (auto& v : twice) { v *= 2; }
  net.fit(cmatrix<double>(p.X.data(), p.K, p.L), cmatrix<double>(p.Y.data(), p.K, 2), twice);
  for (std::int64_t n = 0; n < 2; ++n) { EXPECT_NEAR(net.intercepts()[n], b[n], 1e-12 * (1 + std::fabs(b[n]))); }
  EXPECT_THROW(
      net.fit(cmatrix<double>(p.X.data(), p.K, p.L), cmatrix<double>(p.Y.data(), p.K, 2), std::vector<double>(3, 1.0)),
      fusekit::invalid_argument);  // not one weight per row
}

}  // namespace
