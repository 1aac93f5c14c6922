// SPDX-License-Identifier: Apache-2.0
// The public enums' names: every enumerator by its own spelling (fit_path's
// NCCL paths with a slash), and "unknown" for a value outside the enum, which
// a value cast from an integer or read from a file can be.
#include <fusekit/reduce_types.hpp>
#include <fusekit/train_types.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

template <class E>
std::string name_of(int value) {
  return fusekit::to_string(static_cast<E>(value));
}

TEST(Names, EveryEnumeratorHasItsOwnSpelling) {
  using namespace fusekit;
  EXPECT_STREQ(to_string(reduce_algorithm::naive_atomic), "naive_atomic");
  EXPECT_STREQ(to_string(reduce_algorithm::block_atomic), "block_atomic");
  EXPECT_STREQ(to_string(reduce_algorithm::run_to_run), "run_to_run");
  EXPECT_STREQ(to_string(reduce_algorithm::deterministic), "deterministic");

  EXPECT_STREQ(to_string(fit_status::converged), "converged");
  EXPECT_STREQ(to_string(fit_status::max_iterations), "max_iterations");
  EXPECT_STREQ(to_string(fit_status::diverged), "diverged");
  EXPECT_STREQ(to_string(fit_status::stalled), "stalled");

  EXPECT_STREQ(to_string(gd_method::plain), "plain");
  EXPECT_STREQ(to_string(gd_method::nesterov), "nesterov");
  EXPECT_STREQ(to_string(gd_method::conjugate_gradient), "conjugate_gradient");

  EXPECT_STREQ(to_string(gd_preconditioner::none), "none");
  EXPECT_STREQ(to_string(gd_preconditioner::jacobi), "jacobi");
  EXPECT_STREQ(to_string(gd_preconditioner::cholesky), "cholesky");

  EXPECT_STREQ(to_string(stop_rule::none), "none");
  EXPECT_STREQ(to_string(stop_rule::tolerance), "tolerance");
  EXPECT_STREQ(to_string(stop_rule::relative_tolerance), "relative_tolerance");
  EXPECT_STREQ(to_string(stop_rule::max_iterations), "max_iterations");
  EXPECT_STREQ(to_string(stop_rule::non_finite), "non_finite");
  EXPECT_STREQ(to_string(stop_rule::growth), "growth");
  EXPECT_STREQ(to_string(stop_rule::rounding_floor), "rounding_floor");

  EXPECT_STREQ(to_string(gd_formulation::automatic), "automatic");
  EXPECT_STREQ(to_string(gd_formulation::direct), "direct");
  EXPECT_STREQ(to_string(gd_formulation::gram), "gram");

  EXPECT_STREQ(to_string(gd_init::zeros), "zeros");
  EXPECT_STREQ(to_string(gd_init::warm_start), "warm_start");
  EXPECT_STREQ(to_string(gd_init::uniform), "uniform");

  EXPECT_STREQ(to_string(fit_path::cpu), "cpu");
  EXPECT_STREQ(to_string(fit_path::single_launch), "single_launch");
  EXPECT_STREQ(to_string(fit_path::cublas), "cublas");
  EXPECT_STREQ(to_string(fit_path::mpi), "mpi");
  EXPECT_STREQ(to_string(fit_path::nccl_single_launch), "nccl/single_launch");
  EXPECT_STREQ(to_string(fit_path::nccl_cublas), "nccl/cublas");
}

TEST(Names, AValueOutsideTheEnumIsUnknown) {
  using namespace fusekit;
  for (int v : {-1, 99}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(name_of<reduce_algorithm>(v), "unknown");
    EXPECT_EQ(name_of<fit_status>(v), "unknown");
    EXPECT_EQ(name_of<gd_method>(v), "unknown");
    EXPECT_EQ(name_of<gd_preconditioner>(v), "unknown");
    EXPECT_EQ(name_of<stop_rule>(v), "unknown");
    EXPECT_EQ(name_of<gd_formulation>(v), "unknown");
    EXPECT_EQ(name_of<gd_init>(v), "unknown");
    EXPECT_EQ(name_of<fit_path>(v), "unknown");
  }
  // One past the last enumerator: the table's bound, not the type's.
  EXPECT_EQ(name_of<reduce_algorithm>(4), "unknown");
  EXPECT_EQ(name_of<fit_status>(4), "unknown");
  EXPECT_EQ(name_of<gd_method>(3), "unknown");
  EXPECT_EQ(name_of<gd_preconditioner>(3), "unknown");
  EXPECT_EQ(name_of<stop_rule>(7), "unknown");
  EXPECT_EQ(name_of<gd_formulation>(3), "unknown");
  EXPECT_EQ(name_of<gd_init>(3), "unknown");
  EXPECT_EQ(name_of<fit_path>(6), "unknown");
}

// The names are compile-time constants, for tables built in constexpr code.
static_assert(fusekit::to_string(fusekit::gd_method::conjugate_gradient)[0] == 'c');
static_assert(fusekit::to_string(static_cast<fusekit::fit_path>(-1))[0] == 'u');

}  // namespace
