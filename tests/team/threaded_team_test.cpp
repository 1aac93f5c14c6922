// SPDX-License-Identifier: Apache-2.0
// The bodies the GPU kernels run, under a thread block's own schedule on the
// CPU (tests/common/threaded_team.hpp): M real threads as members, t taking
// t, t + M, ..., real barriers at sync(), sums in the block's order. Each body
// runs for M in {32, 64, 256}, concurrently (ThreadSanitizer's preset checks
// these runs for races) and in turns, one member at a time in an order drawn
// afresh at every barrier, in two different orders: a member that runs past a
// dropped sync() reads what others have not written yet, and the bits then
// depend on the order, where a correct body's never do.
//
// What each body promises, checked here:
//  - the tree tile (detail/reduce/tree.hpp): the bits of serial_team and of the
//    tree's order written out below, for any number of members;
//  - the power iteration: every member returns the same λ, within its stated
//    bound (λ ≤ λmax, relative change ≤ 1e-10 at the end) of the true λmax;
//  - the single-launch fit (descent, Nesterov, CG, with and without Jacobi):
//    the same bits whatever the schedule for one M (a block is deterministic),
//    a converged output meets its tolerance in long double, and the weights
//    agree with serial_team's within the solution's rounding bound;
//  - CGLS's start, rows and direction (the cuBLAS path's per-output bodies,
//    the GEMMs between them written out): the same;
//  - predict's rows staged in a tile: predict_at's bits for every element,
//    nothing written outside the rows;
//  - the Cholesky preconditioner's factor and solve (detail/train/cholesky.hpp):
//    serial_team's bits on every member, a factor within the backward error
//    bound of Cholesky, and a solve within the rounding of the two triangular
//    solves; CG with it on the single launch and on the cuBLAS path's bodies
//    (Gram and CGLS), as with the diagonal scaling above.
#include <fusekit/detail/reduce/tree.hpp>
#include <fusekit/detail/team/cpu_team.hpp>
#include <fusekit/detail/train/best_iterate.hpp>
#include <fusekit/detail/train/cholesky.hpp>
#include <fusekit/detail/train/cpu_best_iterate.hpp>
#include <fusekit/detail/train/output_bodies.hpp>
#include <fusekit/detail/train/power_iteration.hpp>
#include <fusekit/detail/train/predict.hpp>
#include <fusekit/functors.hpp>

#include "common/threaded_team.hpp"
#include "common/train_problem.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using fusekit::fit_status;
using fusekit::gd_method;
using fusekit::gd_options;
using fusekit::detail::descent_params;
using fusekit::detail::serial_team;
using fusekit::test::run_mode;
using fusekit::test::run_team;
using fusekit::test::threaded_team;

constexpr int member_counts[] = {32, 64, 256};

template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// ---- the deterministic tree's tile ---------------------------------------------

// The tile's order written out from its documentation: lane l folds rows
// r = 0, 1, ... of column l (element base + r·256 + l) with op; then for
// s = 128, 64, ..., 1, lane l ⊕= lane l + s for l < min(s, filled − s).
template <class Acc, class Op>
Acc tile_in_order(const std::vector<Acc>& x, std::int64_t tile, const Op& op) {
  using namespace fusekit::detail;
  std::int64_t const n = static_cast<std::int64_t>(x.size()), base = tile * tree_tile;
  std::vector<Acc> lane(tree_lanes);
  for (std::int64_t l = 0; l < tree_lanes && base + l < n; ++l) {
    Acc acc = x[static_cast<std::size_t>(base + l)];
    for (std::int64_t r = 1; r < tree_per_lane; ++r) {
      std::int64_t const i = base + r * tree_lanes + l;
      if (i < n && i < base + tree_tile) { acc = op(acc, x[static_cast<std::size_t>(i)]); }
    }
    lane[static_cast<std::size_t>(l)] = acc;
  }
  std::int64_t const filled = std::min<std::int64_t>(n - base, tree_lanes);
  for (std::int64_t s = tree_lanes / 2; s >= 1; s /= 2) {
    for (std::int64_t l = 0; l < std::min(s, filled - s); ++l) {
      lane[static_cast<std::size_t>(l)] = op(lane[static_cast<std::size_t>(l)], lane[static_cast<std::size_t>(l + s)]);
    }
  }
  return lane[0];
}

template <class Acc, class Op>
void expect_tiles_keep_their_bits(const Op& op, const char* what) {
  using namespace fusekit::detail;
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  // Whole tiles, a last tile with part of a row, one with under a row, one value.
  for (std::int64_t n :
       {std::int64_t{3} * tree_tile, tree_tile + 3 * tree_lanes + 77, tree_tile + 100, std::int64_t{1}}) {
    std::vector<Acc> x(static_cast<std::size_t>(n));
    for (auto& v : x) { v = static_cast<Acc>(u(rng) * std::exp2(static_cast<double>(rng() % 40) - 20)); }
    auto const src = [&](std::int64_t i) { return x[static_cast<std::size_t>(i)]; };
    std::int64_t const tiles = (n + tree_tile - 1) / tree_tile;
    std::vector<Acc> expected(static_cast<std::size_t>(tiles)), serial(expected.size());
    std::vector<Acc> lane(tree_lanes);
    for (std::int64_t tile = 0; tile < tiles; ++tile) {
      expected[static_cast<std::size_t>(tile)] = tile_in_order(x, tile, op);
      serial[static_cast<std::size_t>(tile)] = tree_tile_reduce(serial_team{}, lane.data(), src, op, tile, n);
    }
    ASSERT_TRUE(same_bits(serial, expected)) << what << " serial_team, n " << n;
    for (int m : member_counts) {
      for (const run_mode& how : fusekit::test::modes_to_run()) {
        // One team takes every tile in turn with the same lanes, as a block of
        // the tree kernel does; every member keeps what the body returned.
        std::vector<Acc> shared(tree_lanes);
        std::vector<std::vector<Acc>> by_member(static_cast<std::size_t>(m), std::vector<Acc>(expected.size()));
        run_team(m, how, [&](const threaded_team& team) {
          for (std::int64_t tile = 0; tile < tiles; ++tile) {
            by_member[static_cast<std::size_t>(team.member())][static_cast<std::size_t>(tile)] =
                tree_tile_reduce(team, shared.data(), src, op, tile, n);
          }
        });
        for (int t = 0; t < m; ++t) {
          ASSERT_TRUE(same_bits(by_member[static_cast<std::size_t>(t)], expected))
              << what << ", n " << n << ", " << m << " members " << how.name() << ", member " << t;
        }
      }
    }
  }
}

// The team contract (detail/team/team.hpp) holds every team to every member:
// the CPU's, the tests' threads, and (in the .cu builds) block_team; a type
// that misses one member, or takes it with other arguments, is no team.
struct team_without_combine_pairs {
  template <class F>
  void for_each(std::int64_t, const F&) const {}
  template <class R, class F>
  R sum(std::int64_t, const F&) const {
    return R(0);
  }
  template <class R, class Value>
  void column_sums(std::int64_t, std::int64_t, R*, const Value&) const {}
  template <int Rows, class Acc, class Count, class Value, class Op, class Access>
  void column_reduce(Acc*, const Count&, const Value&, const Op&, const Access&) const {}
  void sync() const {}
  bool leader() const { return true; }
};
struct team_with_it : team_without_combine_pairs {
  template <class Acc, class Op>
  void combine_pairs(Acc*, std::int64_t, std::int64_t, const Op&) const {}
};
struct team_whose_sum_takes_an_int : team_with_it {
  template <class R>
  R sum(int, int) const {
    return R(0);
  }
};
static_assert(fusekit::detail::is_team_v<fusekit::detail::serial_team>);
static_assert(fusekit::detail::is_team_v<fusekit::test::threaded_team>);
static_assert(fusekit::detail::is_team_v<team_with_it>);
static_assert(!fusekit::detail::is_team_v<team_without_combine_pairs>);
static_assert(!fusekit::detail::is_team_v<team_whose_sum_takes_an_int>);
static_assert(!fusekit::detail::is_team_v<int>);

TEST(ThreadedTeam, TreeTileHasTheSerialBitsForAnyMemberCount) {
  expect_tiles_keep_their_bits<float>(fusekit::plus{}, "float plus");
  expect_tiles_keep_their_bits<double>(fusekit::plus{}, "double plus");
  expect_tiles_keep_their_bits<double>(fusekit::maximum{}, "double maximum");
}

// ---- the power iteration ---------------------------------------------------------

TEST(ThreadedTeam, PowerIterationGivesEveryMemberTheSameLambdaWithinItsBound) {
  std::mt19937_64 rng(3);
  for (std::int64_t L : {std::int64_t{7}, std::int64_t{40}, std::int64_t{300}}) {
    // A = Q diag(λ) Qᵀ with a known spectrum, Q from Householder reflections.
    std::vector<double> lambda(static_cast<std::size_t>(L));
    for (std::int64_t i = 0; i < L; ++i) { lambda[static_cast<std::size_t>(i)] = 1.0 + static_cast<double>(i) / 4; }
    lambda.back() = 3.0 * (1.0 + static_cast<double>(L) / 4);  // a gap: the iteration converges fast
    std::vector<double> h(static_cast<std::size_t>(L));
    std::normal_distribution<double> g(0.0, 1.0);
    double h2 = 0;
    for (auto& v : h) { v = g(rng), h2 += v * v; }
    std::vector<double> A(static_cast<std::size_t>(L * L));
    for (std::int64_t i = 0; i < L; ++i) {
      for (std::int64_t j = 0; j < L; ++j) {
        long double s = 0;  // (I − 2hhᵀ/h²) diag(λ) (I − 2hhᵀ/h²)
        for (std::int64_t k = 0; k < L; ++k) {
          long double const qik = (i == k ? 1.0L : 0.0L) - 2.0L * h[i] * h[k] / h2;
          long double const qjk = (j == k ? 1.0L : 0.0L) - 2.0L * h[j] * h[k] / h2;
          s += qik * lambda[static_cast<std::size_t>(k)] * qjk;
        }
        A[static_cast<std::size_t>(i * L + j)] = static_cast<double>(s);
      }
    }
    for (std::int64_t i = 0; i < L; ++i) {  // exactly symmetric
      for (std::int64_t j = 0; j < i; ++j) {
        A[static_cast<std::size_t>(i * L + j)] = A[static_cast<std::size_t>(j * L + i)];
      }
    }
    double const lmax = lambda.back();
    for (int m : member_counts) {
      std::vector<double> first;
      for (const run_mode& how : fusekit::test::modes_to_run()) {
        std::vector<double> v(static_cast<std::size_t>(L)), uu(static_cast<std::size_t>(L)),
            got(static_cast<std::size_t>(m));
        run_team(m, how, [&](const threaded_team& team) {
          got[static_cast<std::size_t>(team.member())] =
              fusekit::detail::symmetric_power_iteration(team, A.data(), L, v.data(), uu.data());
        });
        for (int t = 0; t < m; ++t) {
          ASSERT_EQ(std::memcmp(&got[static_cast<std::size_t>(t)], &got[0], sizeof(double)), 0)
              << "member " << t << " of " << m << " returned another λ";
        }
        EXPECT_LE(got[0], lmax * (1 + 1e-12)) << "the Rayleigh quotient of a unit vector exceeds λmax";
        EXPECT_NEAR(got[0], lmax, 1e-6 * lmax) << L << " unknowns, " << m << " members, " << how.name();
        if (first.empty()) {
          first = got;
        } else {
          EXPECT_TRUE(same_bits(first, got)) << "the schedule changed the bits: a race, " << m << " members";
        }
      }
    }
  }
}

// ---- the single-launch fit of one output ------------------------------------------

struct gram_system {
  std::int64_t L = 0, N = 0;
  std::vector<double> A, B;
};

gram_system gram_of(std::int64_t K, std::int64_t L, std::int64_t N, std::uint32_t seed) {
  auto const p = fusekit::test::make_problem<double>(K, L, N, seed, false, 0.01);
  gram_system s{L, N, std::vector<double>(static_cast<std::size_t>(L * L)),
                std::vector<double>(static_cast<std::size_t>(N * L))};
  for (std::int64_t i = 0; i < L; ++i) {
    for (std::int64_t j = 0; j < L; ++j) {
      long double a = 0;
      for (std::int64_t k = 0; k < K; ++k) { a += static_cast<long double>(p.X[k * L + i]) * p.X[k * L + j]; }
      s.A[static_cast<std::size_t>(i * L + j)] = static_cast<double>(a);
    }
    for (std::int64_t n = 0; n < N; ++n) {
      long double b = 0;
      for (std::int64_t k = 0; k < K; ++k) { b += static_cast<long double>(p.Y[k * N + n]) * p.X[k * L + i]; }
      s.B[static_cast<std::size_t>(n * L + i)] = static_cast<double>(b);
    }
  }
  return s;
}

struct fit_result {
  std::vector<double> W;
  std::vector<fusekit::output_report> reports;
  std::vector<double> rhs_scale;  ///< cgls_across_ranks: each output's ‖y‖ term at the start, as this rank has it
};

// A fit on M threads against serial_team's: the same W up to the order of the
// sums; and against the first schedule run for this M (`first`, empty before
// it): the same bits and the whole report (where the floor stopped it, too),
// as a block without a race gives whatever order its members run in.
void expect_serial_fit_and_schedule_free(const fit_result& serial, const fit_result& threaded, fit_result& first,
                                         const std::string& where) {
  for (std::size_t i = 0; i < serial.W.size(); ++i) {
    EXPECT_NEAR(threaded.W[i], serial.W[i], 1e-7 * (1 + std::fabs(serial.W[i]))) << where << ", w " << i;
  }
  if (first.W.empty()) {
    first = threaded;
    return;
  }
  EXPECT_TRUE(same_bits(first.W, threaded.W)) << "the schedule changed the bits: a race, " << where;
  for (std::size_t n = 0; n < first.reports.size(); ++n) {
    auto const& a = first.reports[n];
    auto const& b = threaded.reports[n];
    EXPECT_EQ(a.iterations, b.iterations) << where;
    EXPECT_EQ(a.status, b.status) << where;
    EXPECT_EQ(a.rule, b.rule) << where;
    EXPECT_EQ(std::memcmp(&a.grad_norm2, &b.grad_norm2, sizeof(double)), 0) << where;
  }
}

// The Cholesky factor of a system's A (serial_team: the bits every team gives)
// and each output's scratch, as the kernels take them; empty: none.
struct factor_of_system {
  fusekit::detail::cholesky_factor factor;
  std::vector<double> t;
  std::vector<double> z;
  fusekit::detail::cholesky_view<double> view() {
    if (factor.L == 0) { return {}; }
    return {factor.G.data(), factor.s.data(), t.data(), z.data()};
  }
};

factor_of_system factor_for(const gram_system& g, bool cholesky) {
  factor_of_system f;
  if (cholesky) {
    f.factor = fusekit::detail::make_cholesky(g.A.data(), g.L);
    f.t.assign(static_cast<std::size_t>(g.N * g.L), 0.0);
    f.z.assign(f.t.size(), 0.0);
  }
  return f;
}

template <class Run>
fit_result single_launch(const gram_system& g, const descent_params<double>& p, const Run& run, bool cholesky = false) {
  fit_result r{std::vector<double>(static_cast<std::size_t>(g.N * g.L), 0.0),
               std::vector<fusekit::output_report>(static_cast<std::size_t>(g.N)),
               {}};
  factor_of_system f = factor_for(g, cholesky);
  for (std::int64_t n = 0; n < g.N; ++n) {
    std::vector<double> shared(fusekit::detail::single_launch_shared_bytes<double>(g.L) / sizeof(double));
    run([&](const auto& team) {
      fusekit::detail::single_launch_body(team, n, g.A.data(), g.B.data(), r.W.data(), g.L, p, r.reports.data(),
                                          shared.data(), f.view());
    });
  }
  return r;
}

// ‖A w − b‖² in long double: the gradient the tolerance speaks of, without the fit's rounding.
long double gradient2(const gram_system& g, const std::vector<double>& W, std::int64_t n) {
  long double s = 0;
  for (std::int64_t i = 0; i < g.L; ++i) {
    long double r = -static_cast<long double>(g.B[static_cast<std::size_t>(n * g.L + i)]);
    for (std::int64_t j = 0; j < g.L; ++j) {
      r += static_cast<long double>(g.A[static_cast<std::size_t>(i * g.L + j)]) *
           W[static_cast<std::size_t>(n * g.L + j)];
    }
    s += r * r;
  }
  return s;
}

// L·ε·(‖A‖_F‖w‖ + ‖b‖): how far a gradient computed in double may be from the exact one.
long double rounding(const gram_system& g, const std::vector<double>& W, std::int64_t n) {
  long double a2 = 0, w2 = 0, b2 = 0;
  for (double a : g.A) { a2 += static_cast<long double>(a) * a; }
  for (std::int64_t i = 0; i < g.L; ++i) {
    w2 += static_cast<long double>(W[static_cast<std::size_t>(n * g.L + i)]) * W[static_cast<std::size_t>(n * g.L + i)];
    b2 += static_cast<long double>(g.B[static_cast<std::size_t>(n * g.L + i)]) *
          g.B[static_cast<std::size_t>(n * g.L + i)];
  }
  return static_cast<long double>(g.L) * std::numeric_limits<double>::epsilon() * (std::sqrt(a2 * w2) + std::sqrt(b2));
}

struct variant {
  const char* what;
  gd_method method;
  bool jacobi;
  std::int64_t budget;
  std::int64_t rows_per_unknown;  // K = rows·L + 20: the larger, the better conditioned XᵀX
  double tolerance = 1e-18;       // 1e-300: unreachable, the fit ends at the rounding floor (stalled)
  double relative = 0;            // > 0: the relative rule alone (tolerance unset), against ‖b‖_D
  bool cholesky = false;          // CG with the Cholesky preconditioner (then `jacobi` is false)
};

void expect_single_launch_under_the_blocks_schedule(const variant& var) {
  // L = 300: members take several unknowns each (M ≤ 256); kept to CG, whose
  // iterations are few, as a barrier of 256 threads costs a few ms here.
  for (std::int64_t L : {std::int64_t{5}, std::int64_t{40}, std::int64_t{300}}) {
    if (L > 256 && (var.method != gd_method::conjugate_gradient || var.tolerance < 1e-100 || var.cholesky)) {
      continue;  // (Cholesky: 2L + 2 barriers a solve)
    }
    gram_system const g = gram_of(var.rows_per_unknown * L + 20, L, 2, static_cast<std::uint32_t>(L));
    // The automatic rate's λ, by the same body (here on one thread).
    std::vector<double> v(static_cast<std::size_t>(L)), u(static_cast<std::size_t>(L));
    double const lambda =
        fusekit::detail::symmetric_power_iteration(serial_team{}, g.A.data(), L, v.data(), u.data(), var.jacobi);
    gd_options o;
    o.method = var.method;
    o.preconditioner = var.jacobi ? fusekit::gd_preconditioner::jacobi : fusekit::gd_preconditioner::none;
    o.max_iterations = var.budget;
    if (var.relative > 0) {
      o.relative_tolerance = var.relative;
    } else {
      o.tolerance = var.tolerance;
    }
    o.stall_window = 10;  // the floor's windows: short, so that a fit to the floor ends soon
    auto const p = fusekit::detail::make_descent_params<double>(o, 1.0 / lambda, 1.0);
    fit_result const serial = single_launch(
        g, p, [](const auto& body) { body(serial_team{}); }, var.cholesky);
    for (int m : member_counts) {
      fit_result first;
      for (const run_mode& how : fusekit::test::modes_to_run()) {
        std::string const where =
            std::string(var.what) + ", L " + std::to_string(L) + ", " + std::to_string(m) + " members, " + how.name();
        fit_result const threaded = single_launch(
            g, p, [&](const auto& body) { run_team(m, how, [&](const threaded_team& team) { body(team); }); },
            var.cholesky);
        for (std::int64_t n = 0; n < g.N; ++n) {
          auto const& rep = threaded.reports[static_cast<std::size_t>(n)];
          auto const& ser = serial.reports[static_cast<std::size_t>(n)];
          EXPECT_EQ(rep.status, ser.status) << where;
          if (rep.status == fit_status::converged && var.relative == 0) {
            // The stop rule: gradᵀgrad < tolerance, computed in double; in long
            // double the same gradient is within its rounding, L·ε·(‖A‖‖w‖ + ‖b‖).
            EXPECT_LE(std::sqrt(gradient2(g, threaded.W, n)),
                      std::sqrt(static_cast<long double>(var.tolerance)) + rounding(g, threaded.W, n))
                << where << ", output " << n;
          }
          if (var.method == gd_method::plain) {  // no convergence in the budget: iterate for iterate
            EXPECT_EQ(rep.iterations, ser.iterations) << where;
          }
          if (var.cholesky) {  // M = A⁻¹ up to rounding: one or two updates (cholesky.hpp)
            EXPECT_LE(rep.iterations, 3) << where;
          }
        }
        expect_serial_fit_and_schedule_free(serial, threaded, first, where);
      }
    }
  }
}

TEST(ThreadedTeam, SingleLaunchPlainDescent) {
  expect_single_launch_under_the_blocks_schedule({"plain", gd_method::plain, false, 20, 4});
}
TEST(ThreadedTeam, SingleLaunchNesterov) {
  expect_single_launch_under_the_blocks_schedule({"nesterov", gd_method::nesterov, false, 3000, 20});
}
TEST(ThreadedTeam, SingleLaunchConjugateGradient) {
  expect_single_launch_under_the_blocks_schedule({"cg", gd_method::conjugate_gradient, false, 3000, 4});
}
TEST(ThreadedTeam, SingleLaunchConjugateGradientJacobi) {
  expect_single_launch_under_the_blocks_schedule({"cg+jacobi", gd_method::conjugate_gradient, true, 3000, 4});
}
TEST(ThreadedTeam, SingleLaunchConjugateGradientCholesky) {
  expect_single_launch_under_the_blocks_schedule(
      {"cg+cholesky", gd_method::conjugate_gradient, false, 3000, 4, 1e-18, 0, true});
}
// The relative rule: where it stops depends on ‖b‖_D, D the Jacobi scaling
// read from A's diagonal, which every member must have copied in whole
// (Nesterov: its gradient falls steadily, so the threshold decides the step).
TEST(ThreadedTeam, SingleLaunchNesterovJacobiRelative) {
  expect_single_launch_under_the_blocks_schedule(
      {"nesterov+jacobi, relative", gd_method::nesterov, true, 3000, 20, 0.0, 1e-9});
}
// Every output starts from its own row of W (gd_init::warm_start): output
// n's single launch from row n gives the bits of a one-output system of row
// n from that row, on every member count.
TEST(ThreadedTeam, SingleLaunchWarmStartsEachOutputFromItsOwnRow) {
  std::int64_t const L = 6, N = 3;
  gram_system const g = gram_of(40, L, N, 17);
  std::vector<double> v(static_cast<std::size_t>(L)), u(static_cast<std::size_t>(L));
  double const lambda = fusekit::detail::symmetric_power_iteration(serial_team{}, g.A.data(), L, v.data(), u.data());
  gd_options o;
  o.init = fusekit::gd_init::warm_start;
  o.max_iterations = 3;  // far from converged: the result shows where each output started
  auto const p = fusekit::detail::make_descent_params<double>(o, 1.0 / lambda, 1.0);
  std::vector<double> start(static_cast<std::size_t>(N * L));
  for (std::size_t i = 0; i < start.size(); ++i) { start[i] = 0.5 * static_cast<double>(i % 7) - 1.0; }
  for (int m : member_counts) {
    fit_result all{start, std::vector<fusekit::output_report>(static_cast<std::size_t>(N)), {}};
    for (std::int64_t n = 0; n < N; ++n) {
      std::vector<double> shared(fusekit::detail::single_launch_shared_bytes<double>(L) / sizeof(double));
      run_team(m, fusekit::test::modes_to_run().front(), [&](const threaded_team& team) {
        fusekit::detail::single_launch_body(team, n, g.A.data(), g.B.data(), all.W.data(), L, p, all.reports.data(),
                                            shared.data());
      });
    }
    for (std::int64_t n = 0; n < N; ++n) {
      gram_system const one{L, 1, g.A, std::vector<double>(g.B.begin() + n * L, g.B.begin() + (n + 1) * L)};
      std::vector<double> w(start.begin() + n * L, start.begin() + (n + 1) * L);
      std::vector<fusekit::output_report> report(1);
      std::vector<double> shared(fusekit::detail::single_launch_shared_bytes<double>(L) / sizeof(double));
      fusekit::detail::single_launch_body(serial_team{}, 0, one.A.data(), one.B.data(), w.data(), L, p, report.data(),
                                          shared.data());
      for (std::int64_t l = 0; l < L; ++l) {
        EXPECT_NEAR(all.W[n * L + l], w[l], 1e-12 * (1 + std::fabs(w[l]))) << m << " members, output " << n;
      }
    }
  }
}

// serial_team::sum and column_sums add in index order from 0 (team.hpp): on
// values that cancel, the order shows in the bits.
TEST(SerialTeam, SumsAddInIndexOrderFromZero) {
  std::vector<double> const v = {1.0, 0x1p60, 3.0, -0x1p60, 0.5, 0x1p-40, -7.0, 0x1p55, 1.25, -0x1p55, 2.0};
  auto const n = static_cast<std::int64_t>(v.size());
  double forward = 0, backward = 0;
  for (std::int64_t i = 0; i < n; ++i) { forward = forward + v[i]; }
  for (std::int64_t i = n - 1; i >= 0; --i) { backward = backward + v[i]; }
  ASSERT_NE(forward, backward);  // the values tell the orders apart
  double const sum = serial_team{}.sum<double>(n, [&](std::int64_t i) { return v[i]; });
  EXPECT_EQ(std::memcmp(&sum, &forward, sizeof sum), 0);
  std::vector<double> out(2);
  serial_team{}.column_sums<double>(n, 2, out.data(),
                                    [&](std::int64_t r, std::int64_t l) { return l == 0 ? v[r] : -v[r]; });
  EXPECT_EQ(std::memcmp(&out[0], &forward, sizeof(double)), 0);
  EXPECT_EQ(out[1], -forward);
}

// To the rounding floor: where it stops depends on the floor, made of ‖b‖_D and
// ‖A‖_D (D: the Jacobi scaling), which every member must read whole.
TEST(ThreadedTeam, SingleLaunchConjugateGradientJacobiToTheFloor) {
  expect_single_launch_under_the_blocks_schedule(
      {"cg+jacobi to the floor", gd_method::conjugate_gradient, true, 80, 4, 1e-300});
}

// ---- the cuBLAS path's per-output bodies: CGLS on the direct formulation ----------

// Q (N × rows, output by output) = X·Pᵀ over `rows` rows of X from row k0: the
// cuBLAS path's first GEMM of CGLS, on one thread.
void rows_times_iterates(const fusekit::test::problem<double>& pr, std::int64_t k0, std::int64_t rows,
                         const std::vector<double>& point, std::vector<double>& Q) {
  std::int64_t const L = pr.L, N = pr.N;
  for (std::int64_t k = 0; k < rows; ++k) {
    for (std::int64_t n = 0; n < N; ++n) {
      double q = 0;
      for (std::int64_t l = 0; l < L; ++l) {
        q += pr.X[static_cast<std::size_t>((k0 + k) * L + l)] * point[static_cast<std::size_t>(n * L + l)];
      }
      Q[static_cast<std::size_t>(n * rows + k)] = q;
    }
  }
}

// G (N × L) += Xᵀρ over those rows (ρ: N × rows, output by output): the second GEMM.
void add_rows_transposed(const fusekit::test::problem<double>& pr, std::int64_t k0, std::int64_t rows,
                         const std::vector<double>& R, std::vector<double>& G) {
  std::int64_t const L = pr.L, N = pr.N;
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t l = 0; l < L; ++l) {
      double x = 0;
      for (std::int64_t k = 0; k < rows; ++k) {
        x += pr.X[static_cast<std::size_t>((k0 + k) * L + l)] * R[static_cast<std::size_t>(n * rows + k)];
      }
      G[static_cast<std::size_t>(n * L + l)] += x;
    }
  }
}

// The cuBLAS path's loop (detail/train/cuda_iterations.cuh) for CG, with the
// GEMMs written out here on one thread and the bodies on the team `run` gives:
// begin; then, CGLS (`gram` false): Q = X·Pᵀ, the rows' residual, G = Xᵀρ, the
// step; Gram CG: G = A·Pᵀ, the step; until no output goes on. Q and ρ are
// N × K, output by output, as the kernels keep them. `cholesky`: the factor
// of A as the step's preconditioner.
template <class Run>
fit_result cublas_path_fit(const fusekit::test::problem<double>& pr, const gram_system& g,
                           const descent_params<double>& p, const Run& run, bool gram = false, bool cholesky = false,
                           const fusekit::detail::best_iterate_view<double>& kept = {}) {
  std::int64_t const K = pr.K, L = pr.L, N = pr.N;
  const std::vector<double>& A = g.A;
  const std::vector<double>& B = g.B;
  fit_result r{std::vector<double>(static_cast<std::size_t>(N * L), 0.0),
               std::vector<fusekit::output_report>(static_cast<std::size_t>(N)),
               {}};
  std::vector<fusekit::detail::descent_state<double>> states(static_cast<std::size_t>(N));
  std::vector<double> previous(r.W.size()), point(r.W.size()), G(r.W.size());
  std::vector<double> Q(static_cast<std::size_t>(K * N)), R(Q.size());
  factor_of_system f = factor_for(g, cholesky);
  for (std::int64_t n = 0; n < N; ++n) {
    run([&](const auto& team) {
      fusekit::detail::begin_output_body(team, n, states.data(), r.W.data(), previous.data(), point.data(), A.data(),
                                         B.data(), pr.Y.data(), K, N, L, gram, p, kept);
    });
  }
  for (std::int64_t it = 0; it < 2 * p.max_iterations + 2; ++it) {
    if (gram) {
      for (std::int64_t n = 0; n < N; ++n) {
        for (std::int64_t i = 0; i < L; ++i) {
          double a = 0;
          for (std::int64_t j = 0; j < L; ++j) {
            a += A[static_cast<std::size_t>(i * L + j)] * point[static_cast<std::size_t>(n * L + j)];
          }
          G[static_cast<std::size_t>(n * L + i)] = a;
        }
      }
    } else {
      rows_times_iterates(pr, 0, K, point, Q);
      for (std::int64_t n = 0; n < N; ++n) {
        run([&](const auto& team) {
          fusekit::detail::cgls_rows_body(team, n, states.data(), r.W.data(), point.data(), Q.data(), R.data(),
                                          pr.Y.data(), K, N, L);
        });
      }
      std::fill(G.begin(), G.end(), 0.0);
      add_rows_transposed(pr, 0, K, R, G);
    }
    bool any = false;
    for (std::int64_t n = 0; n < N; ++n) {
      bool goes_on = false;
      run([&](const auto& team) {
        bool const mine =
            fusekit::detail::step_output_body(team, n, states.data(), r.W.data(), previous.data(), point.data(),
                                              G.data(), A.data(), B.data(), gram, L, p, f.view(), kept);
        if (team.leader()) { goes_on = mine; }
      });
      any = any || goes_on;
    }
    if (!any) { break; }
  }
  for (std::int64_t n = 0; n < N; ++n) {
    r.reports[static_cast<std::size_t>(n)] = states[static_cast<std::size_t>(n)].report;
  }
  return r;
}

// Two outputs at L = 6, so that Q and ρ's layout (output by output) is exercised.
TEST(ThreadedTeam, CglsBodiesOfTheCublasPath) {
  for (std::int64_t L : {std::int64_t{6}, std::int64_t{30}}) {
    for (bool jacobi : {false, true}) {
      auto const pr = fusekit::test::make_problem<double>(3 * L + 10, L, L == 6 ? 2 : 1,
                                                          static_cast<std::uint32_t>(L) + 40, false, 0.01);
      gram_system const g = gram_of(pr.K, L, pr.N, static_cast<std::uint32_t>(L) + 40);  // the same problem's A and B
      gd_options o;
      o.method = gd_method::conjugate_gradient;
      o.formulation = fusekit::gd_formulation::direct;
      o.preconditioner = jacobi ? fusekit::gd_preconditioner::jacobi : fusekit::gd_preconditioner::none;
      o.max_iterations = 400;
      o.tolerance = 1e-16;
      o.stall_window = 10;
      auto const p = fusekit::detail::make_descent_params<double>(o, 1.0, 1.0);
      fit_result const serial = cublas_path_fit(pr, g, p, [](const auto& body) { body(serial_team{}); });
      for (std::int64_t n = 0; n < pr.N; ++n) {
        ASSERT_EQ(serial.reports[static_cast<std::size_t>(n)].status, fit_status::converged) << "serial_team, L " << L;
      }
      for (int m : member_counts) {
        fit_result first;
        for (const run_mode& how : fusekit::test::modes_to_run()) {
          std::string const where = std::string(jacobi ? "cgls+jacobi" : "cgls") + ", L " + std::to_string(L) + ", " +
                                    std::to_string(m) + " members, " + how.name();
          fit_result const threaded = cublas_path_fit(
              pr, g, p, [&](const auto& body) { run_team(m, how, [&](const threaded_team& team) { body(team); }); });
          for (std::int64_t n = 0; n < pr.N; ++n) {
            EXPECT_EQ(threaded.reports[static_cast<std::size_t>(n)].status, fit_status::converged) << where;
          }
          expect_serial_fit_and_schedule_free(serial, threaded, first, where);
        }
      }
    }
  }
}

// The cuBLAS path's CGLS across GPUs (fusekit::nccl; cublas_iterations with a
// system whose `ranks` is true): rank r holds rows [bounds[r], bounds[r + 1])
// and its own copy of every output's state and iterates. yᵀy at the start
// (target_square_sum), then each iteration's qᵀq (cgls_square_sum_body) and
// Xᵀρ are added over the ranks in rank order, one sum that every rank reads,
// as ncclAllReduce gives; the bodies run on each rank. Returns every rank's
// result.
template <class Run>
std::vector<fit_result> cgls_across_ranks(const fusekit::test::problem<double>& pr, const gram_system& g,
                                          const descent_params<double>& p, const Run& run,
                                          const std::vector<std::int64_t>& bounds) {
  std::int64_t const L = pr.L, N = pr.N;
  std::size_t const ranks = bounds.size() - 1;
  struct rank_copy {
    std::int64_t k0 = 0, K = 0;
    fit_result r;
    std::vector<fusekit::detail::descent_state<double>> states;
    std::vector<double> previous, point, Q, R;
  };
  std::vector<rank_copy> at(ranks);
  std::vector<double> y2(static_cast<std::size_t>(N), 0.0), q2(y2.size()), part(y2.size());
  std::vector<double> G(static_cast<std::size_t>(N * L));
  for (std::size_t i = 0; i < ranks; ++i) {
    rank_copy& c = at[i];
    c.k0 = bounds[i];
    c.K = bounds[i + 1] - bounds[i];
    c.r = {std::vector<double>(G.size(), 0.0), std::vector<fusekit::output_report>(static_cast<std::size_t>(N)), {}};
    c.states.resize(static_cast<std::size_t>(N));
    c.previous.resize(G.size());
    c.point.resize(G.size());
    c.Q.resize(static_cast<std::size_t>(c.K * N));
    c.R.resize(c.Q.size());
  }
  // One sum over the ranks, in rank order, of what `each(rank, n, team)` gives per output.
  auto const over_ranks = [&](std::vector<double>& total, const auto& each) {
    std::fill(total.begin(), total.end(), 0.0);
    for (rank_copy& c : at) {
      for (std::int64_t n = 0; n < N; ++n) {
        run([&](const auto& team) {
          double const v = each(c, n, team);
          if (team.leader()) { part[static_cast<std::size_t>(n)] = v; }
        });
        total[static_cast<std::size_t>(n)] += part[static_cast<std::size_t>(n)];
      }
    }
  };
  over_ranks(y2, [&](const rank_copy& c, std::int64_t n, const auto& team) {
    return fusekit::detail::target_square_sum(team, pr.Y.data() + c.k0 * N, c.K, N, n);
  });
  for (rank_copy& c : at) {
    for (std::int64_t n = 0; n < N; ++n) {
      run([&](const auto& team) {
        fusekit::detail::begin_output_body(team, n, c.states.data(), c.r.W.data(), c.previous.data(), c.point.data(),
                                           g.A.data(), g.B.data(), pr.Y.data() + c.k0 * N, c.K, N, L, false, p, {},
                                           y2.data());
      });
      c.r.rhs_scale.push_back(c.states[static_cast<std::size_t>(n)].terms.rhs_scale);
    }
  }
  for (std::int64_t it = 0; it < 2 * p.max_iterations + 2; ++it) {
    for (rank_copy& c : at) { rows_times_iterates(pr, c.k0, c.K, c.point, c.Q); }
    over_ranks(q2, [&](const rank_copy& c, std::int64_t n, const auto& team) {
      std::vector<double> out(static_cast<std::size_t>(N));  // this member's: only the leader's is read
      fusekit::detail::cgls_square_sum_body(team, n, c.states.data(), c.Q.data(), c.K, out.data());
      return team.leader() ? out[static_cast<std::size_t>(n)] : 0.0;
    });
    std::fill(G.begin(), G.end(), 0.0);
    for (rank_copy& c : at) {
      for (std::int64_t n = 0; n < N; ++n) {
        run([&](const auto& team) {
          fusekit::detail::cgls_rows_body(team, n, c.states.data(), c.r.W.data(), c.point.data(), c.Q.data(),
                                          c.R.data(), pr.Y.data() + c.k0 * N, c.K, N, L, q2.data());
        });
      }
      add_rows_transposed(pr, c.k0, c.K, c.R, G);
    }
    std::vector<bool> any(ranks, false);
    for (std::size_t i = 0; i < ranks; ++i) {
      rank_copy& c = at[i];
      for (std::int64_t n = 0; n < N; ++n) {
        bool goes_on = false;
        run([&](const auto& team) {
          bool const mine =
              fusekit::detail::step_output_body(team, n, c.states.data(), c.r.W.data(), c.previous.data(),
                                                c.point.data(), G.data(), g.A.data(), g.B.data(), false, L, p);
          if (team.leader()) { goes_on = mine; }
        });
        any[i] = any[i] || goes_on;
      }
    }
    for (std::size_t i = 1; i < ranks; ++i) { EXPECT_EQ(any[i], any[0]) << "the ranks disagree on going on"; }
    if (!any[0]) { break; }
  }
  std::vector<fit_result> out;
  for (rank_copy& c : at) {
    for (std::int64_t n = 0; n < N; ++n) {
      c.r.reports[static_cast<std::size_t>(n)] = c.states[static_cast<std::size_t>(n)].report;
    }
    out.push_back(c.r);
  }
  return out;
}

// CGLS across ranks is the one-GPU fit: on one rank, the same bits and
// reports (the split sums are the same sums); on 2 and 3 ranks (one without
// rows), the same W on every rank, bit for bit, and the one-rank W within
// 1e-10 relative (only the sums' order differs). On the threaded team, the
// schedule changes no bit.
TEST(ThreadedTeam, CglsAcrossRanksIsTheOneGpuFit) {
  for (std::int64_t L : {std::int64_t{6}, std::int64_t{30}}) {
    auto const pr = fusekit::test::make_problem<double>(3 * L + 10, L, L == 6 ? 2 : 1,
                                                        static_cast<std::uint32_t>(L) + 40, false, 0.01);
    gram_system const g = gram_of(pr.K, L, pr.N, static_cast<std::uint32_t>(L) + 40);
    gd_options o;
    o.method = gd_method::conjugate_gradient;
    o.formulation = fusekit::gd_formulation::direct;
    o.preconditioner = fusekit::gd_preconditioner::jacobi;
    o.max_iterations = 400;
    o.tolerance = 1e-16;
    o.stall_window = 10;
    auto const p = fusekit::detail::make_descent_params<double>(o, 1.0, 1.0);
    auto const serial = [](const auto& body) { body(serial_team{}); };
    fit_result const one = cublas_path_fit(pr, g, p, serial);
    std::int64_t const K = pr.K;
    for (const std::vector<std::int64_t>& bounds :
         {std::vector<std::int64_t>{0, K}, std::vector<std::int64_t>{0, K / 2, K},
          std::vector<std::int64_t>{0, 0, K / 3, K}}) {
      std::string const where = "L " + std::to_string(L) + ", " + std::to_string(bounds.size() - 1) + " ranks";
      std::vector<fit_result> const all = cgls_across_ranks(pr, g, p, serial, bounds);
      for (const fit_result& rank : all) {
        EXPECT_TRUE(same_bits(rank.W, all[0].W)) << where << ": the ranks' W differ";
        // Every rank starts from ‖y_n‖ over every rank's rows: √L·‖y_n‖ (Jacobi, no zero column).
        for (std::int64_t n = 0; n < pr.N; ++n) {
          long double y2 = 0;
          for (std::int64_t k = 0; k < K; ++k) {
            y2 += static_cast<long double>(pr.Y[static_cast<std::size_t>(k * pr.N + n)]) *
                  pr.Y[static_cast<std::size_t>(k * pr.N + n)];
          }
          double const expected = std::sqrt(static_cast<double>(L)) * static_cast<double>(std::sqrt(y2));
          EXPECT_NEAR(rank.rhs_scale[static_cast<std::size_t>(n)], expected, 1e-13 * expected)
              << where << ", output " << n;
        }
      }
      for (std::size_t n = 0; n < one.reports.size(); ++n) {
        EXPECT_EQ(all[0].reports[n].status, fit_status::converged) << where;
        if (bounds.size() == 2) {
          EXPECT_EQ(all[0].reports[n].iterations, one.reports[n].iterations) << where;
          EXPECT_EQ(std::memcmp(&all[0].reports[n].grad_norm2, &one.reports[n].grad_norm2, sizeof(double)), 0) << where;
        }
      }
      if (bounds.size() == 2) { EXPECT_TRUE(same_bits(all[0].W, one.W)) << where; }
      for (std::size_t i = 0; i < one.W.size(); ++i) {
        EXPECT_NEAR(all[0].W[i], one.W[i], 1e-10 * (1 + std::fabs(one.W[i]))) << where << ", w " << i;
      }
      if (bounds.size() != 4 || L != 6) { continue; }  // the threaded team: 3 ranks, the smaller shape
      for (int m : member_counts) {
        fit_result first;
        for (const run_mode& how : fusekit::test::modes_to_run()) {
          std::vector<fit_result> const threaded = cgls_across_ranks(
              pr, g, p, [&](const auto& body) { run_team(m, how, [&](const threaded_team& team) { body(team); }); },
              bounds);
          expect_serial_fit_and_schedule_free(all[0], threaded[0], first,
                                              where + ", " + std::to_string(m) + " members, " + how.name());
        }
      }
    }
  }
}

// CG with the Cholesky preconditioner on the cuBLAS path's bodies, on A (Gram)
// and on X (CGLS, where a fit goes when the factor leaves A): the factor's
// solve in every step, on the team.
TEST(ThreadedTeam, CholeskyOnTheCublasPathsBodies) {
  for (std::int64_t L : {std::int64_t{6}, std::int64_t{30}}) {
    for (bool gram : {true, false}) {
      auto const pr = fusekit::test::make_problem<double>(3 * L + 10, L, L == 6 ? 2 : 1,
                                                          static_cast<std::uint32_t>(L) + 40, false, 0.01);
      gram_system const g = gram_of(pr.K, L, pr.N, static_cast<std::uint32_t>(L) + 40);
      gd_options o;
      o.method = gd_method::conjugate_gradient;
      o.preconditioner = fusekit::gd_preconditioner::cholesky;
      o.max_iterations = 400;
      o.tolerance = 1e-16;
      o.stall_window = 10;
      auto p = fusekit::detail::make_descent_params<double>(o, 1.0, 1.0);
      p.jacobi = false;  // the factor in Jacobi's place, as every backend sets it
      fit_result const serial = cublas_path_fit(
          pr, g, p, [](const auto& body) { body(serial_team{}); }, gram, true);
      for (std::int64_t n = 0; n < pr.N; ++n) {
        ASSERT_EQ(serial.reports[static_cast<std::size_t>(n)].status, fit_status::converged) << "serial_team, L " << L;
        EXPECT_LE(serial.reports[static_cast<std::size_t>(n)].iterations, 3) << "M = A⁻¹ up to rounding, L " << L;
      }
      for (int m : member_counts) {
        fit_result first;
        for (const run_mode& how : fusekit::test::modes_to_run()) {
          std::string const where = std::string(gram ? "gram cg+cholesky" : "cgls+cholesky") + ", L " +
                                    std::to_string(L) + ", " + std::to_string(m) + " members, " + how.name();
          fit_result const threaded = cublas_path_fit(
              pr, g, p, [&](const auto& body) { run_team(m, how, [&](const threaded_team& team) { body(team); }); },
              gram, true);
          for (std::int64_t n = 0; n < pr.N; ++n) {
            EXPECT_EQ(threaded.reports[static_cast<std::size_t>(n)].status, fit_status::converged) << where;
          }
          expect_serial_fit_and_schedule_free(serial, threaded, first, where);
        }
      }
    }
  }
}

// ---- what each output keeps for the best-iterate rule ----------------------------

// best_iterate_view: each output's start, and the w after the call of the
// method with the first smallest gradᵀgrad. Independently of the bodies'
// bookkeeping: a fit with a budget of j updates ends at the j-th pair
// (w, gradᵀgrad), so after B updates the best is the w of the budget j ≤ B
// whose report's gradᵀgrad is the first smallest.
struct kept_rows {
  std::vector<double> start, best, best_g2;
  fusekit::detail::best_iterate_view<double> view() { return {start.data(), best.data(), best_g2.data()}; }
};

kept_rows make_kept(std::int64_t N, std::int64_t L) {
  return {std::vector<double>(static_cast<std::size_t>(N * L), -9.0),
          std::vector<double>(static_cast<std::size_t>(N * L), -9.0), std::vector<double>(static_cast<std::size_t>(N))};
}

// The expected best of each output from the budgets 1..B (`fit_with(budget)`).
template <class Fit>
std::vector<double> best_by_budgets(std::int64_t B, std::int64_t N, std::int64_t L, const Fit& fit_with) {
  std::vector<double> best(static_cast<std::size_t>(N * L));
  std::vector<double> least(static_cast<std::size_t>(N), -1);
  for (std::int64_t j = 1; j <= B; ++j) {
    fit_result const r = fit_with(j);
    for (std::int64_t n = 0; n < N; ++n) {
      double const g2 = r.reports[static_cast<std::size_t>(n)].grad_norm2;
      if (g2 < least[n] || least[n] < 0) {
        least[n] = g2;
        std::copy(r.W.begin() + n * L, r.W.begin() + (n + 1) * L, best.begin() + n * L);
      }
    }
  }
  return best;
}

TEST(ThreadedTeam, EachOutputKeepsItsStartAndBestIterate) {
  std::int64_t const L = 8, N = 2, B = 24;
  gram_system const g = gram_of(3 * L, L, N, 23);
  std::vector<double> v(static_cast<std::size_t>(L)), u(static_cast<std::size_t>(L));
  double const lambda = fusekit::detail::symmetric_power_iteration(serial_team{}, g.A.data(), L, v.data(), u.data());
  std::vector<double> warm(static_cast<std::size_t>(N * L));
  for (std::size_t i = 0; i < warm.size(); ++i) { warm[i] = 0.25 * static_cast<double>(i % 5) - 0.5; }
  // Nesterov from a warm start (its gradient rises and falls), and plain
  // descent past 2/λ (it rises from the first update on: the best is early).
  for (bool const nesterov : {true, false}) {
    gd_options o;
    o.method = nesterov ? gd_method::nesterov : gd_method::plain;
    o.init = fusekit::gd_init::warm_start;
    o.tolerance = 1e-300;
    o.stall_window = 1000;
    auto const params = [&](std::int64_t budget) {
      o.max_iterations = budget;
      return fusekit::detail::make_descent_params<double>(o, (nesterov ? 1.0 : 2.5) / lambda, 1.0);
    };
    auto const run = [&](std::int64_t budget, const auto& on_team, kept_rows* kept) {
      fit_result r{warm, std::vector<fusekit::output_report>(static_cast<std::size_t>(N)), {}};
      fusekit::detail::best_iterate_view<double> const view =
          kept != nullptr ? kept->view() : fusekit::detail::best_iterate_view<double>{};
      descent_params<double> const p = params(budget);  // before the members start: they only read it
      for (std::int64_t n = 0; n < N; ++n) {
        std::vector<double> shared(fusekit::detail::single_launch_shared_bytes<double>(L) / sizeof(double));
        on_team([&](const auto& team) {
          fusekit::detail::single_launch_body(team, n, g.A.data(), g.B.data(), r.W.data(), L, p, r.reports.data(),
                                              shared.data(), {}, view);
        });
      }
      return r;
    };
    auto const serial = [](const auto& body) { body(serial_team{}); };
    std::vector<double> const expected =
        best_by_budgets(B, N, L, [&](std::int64_t j) { return run(j, serial, nullptr); });
    fit_result const reached = run(B, serial, nullptr);
    if (!nesterov) { EXPECT_NE(expected, reached.W) << "past 2/λ the best is not the iterate reached"; }
    for (int m : member_counts) {
      for (const run_mode& how : fusekit::test::modes_to_run()) {
        kept_rows kept = make_kept(N, L);
        fit_result const r = run(
            B, [&](const auto& body) { run_team(m, how, [&](const threaded_team& team) { body(team); }); }, &kept);
        std::string const where =
            std::string(nesterov ? "nesterov" : "plain") + ", " + std::to_string(m) + " members, " + how.name();
        EXPECT_EQ(kept.start, warm) << where;
        EXPECT_EQ(kept.best, expected) << where;
        EXPECT_EQ(r.W, reached.W) << where << ": keeping the best changes nothing else";
      }
    }
  }
  // The cuBLAS path's bodies, Gram CG and CGLS, from W = 0.
  auto const pr = fusekit::test::make_problem<double>(3 * L + 10, L, N, 77, false, 0.01);
  gram_system const h = gram_of(pr.K, L, N, 77);
  for (bool const gram : {true, false}) {
    gd_options o;
    o.method = gd_method::conjugate_gradient;
    o.tolerance = 1e-300;
    o.stall_window = 1000;
    auto const params = [&](std::int64_t budget) {
      o.max_iterations = budget;
      return fusekit::detail::make_descent_params<double>(o, 1.0, 1.0);
    };
    std::int64_t const budget = L - 2;  // short of CG's L updates
    std::vector<double> const expected = best_by_budgets(budget, N, L, [&](std::int64_t j) {
      return cublas_path_fit(
          pr, h, params(j), [](const auto& body) { body(serial_team{}); }, gram);
    });
    for (int m : member_counts) {
      kept_rows kept = make_kept(N, L);
      (void)cublas_path_fit(
          pr, h, params(budget),
          [&](const auto& body) {
            run_team(m, fusekit::test::modes_to_run().front(), [&](const threaded_team& team) { body(team); });
          },
          gram, false, kept.view());
      EXPECT_EQ(kept.start, std::vector<double>(static_cast<std::size_t>(N * L), 0.0)) << m;
      for (std::size_t i = 0; i < expected.size(); ++i) {  // the team's sums: the serial bits up to their order
        EXPECT_NEAR(kept.best[i], expected[i], 1e-9 * (1 + std::fabs(expected[i])))
            << (gram ? "gram cg, " : "cgls, ") << m << " members, " << i;
      }
    }
  }
}

// The GPU's residual terms (residual_terms_block, a block per output,
// candidate and slice of rows) over every block index on the team: the
// slices' sums add up to the CPU's residual over all rows (rows_residual2's
// row body, the sums in another order: within 1e-12), W = 0 is ‖y‖², and
// every block writes its two values and nothing else.
TEST(ThreadedTeam, ResidualTermsOfEveryBlockAddUpToTheResidual) {
  using fusekit::detail::residual_candidates;
  std::int64_t const K = 2 * 4096 + 1808, L = 5, N = 2;  // three slices, the last one short
  auto const pr = fusekit::test::make_problem<double>(K, L, N, 91, false, 0.5);
  std::vector<double> W(static_cast<std::size_t>(N * L));
  for (std::size_t i = 0; i < W.size(); ++i) { W[i] = 0.3 * static_cast<double>(i) - 1.0; }
  residual_candidates<double> const c{{W.data(), nullptr, nullptr, nullptr}, 2};
  std::int64_t const slice_rows = fusekit::detail::residual_slice_rows(K);
  std::int64_t const slices = (K + slice_rows - 1) / slice_rows;
  ASSERT_EQ(slices, 3);
  std::int64_t const blocks = N * c.count * slices;
  std::vector<double> out(static_cast<std::size_t>(2 * blocks + 1), -1.0);
  for (std::int64_t b = 0; b < blocks; ++b) {
    run_team(64, fusekit::test::modes_to_run().front(), [&](const threaded_team& team) {
      fusekit::detail::residual_terms_block(team, b, pr.X.data(), pr.Y.data(), K, L, N, c, slice_rows, slices,
                                            out.data());
    });
  }
  EXPECT_EQ(out.back(), -1.0) << "a block wrote past its two values";
  fusekit::matrix<const double> const X(pr.X.data(), K, L), Y(pr.Y.data(), K, N);
  std::vector<double> const zero(static_cast<std::size_t>(L), 0.0);
  for (std::int64_t n = 0; n < N; ++n) {
    for (int k = 0; k < 2; ++k) {
      const double* const w = k == 0 ? W.data() + n * L : zero.data();
      double r2 = 0, rounding = 0;
      for (std::int64_t sl = 0; sl < slices; ++sl) {
        std::int64_t const b = (n * c.count + k) * slices + sl;
        r2 += out[static_cast<std::size_t>(2 * b)];
        rounding += out[static_cast<std::size_t>(2 * b + 1)];
      }
      double const want = fusekit::detail::rows_residual2(X, Y, n, w);
      double const want_rounding =
          fusekit::detail::residual2_rounding(X, Y, n, w) / fusekit::detail::residual2_rounding_factor<double>(L);
      EXPECT_NEAR(r2, want, 1e-12 * want) << "output " << n << ", candidate " << k;
      EXPECT_NEAR(rounding, want_rounding, 1e-12 * want_rounding) << "output " << n << ", candidate " << k;
      if (k == 1) {
        long double y2 = 0;
        for (std::int64_t r = 0; r < K; ++r) { y2 += static_cast<long double>(pr.Y[r * N + n]) * pr.Y[r * N + n]; }
        EXPECT_NEAR(r2, static_cast<double>(y2), 1e-12 * static_cast<double>(y2)) << "W = 0: ‖y‖², output " << n;
      }
    }
  }
}

// ---- the Cholesky preconditioner's factor and solve --------------------------------

constexpr long double unit = 0x1p-53L;

// The matrices the factor meets: well conditioned, a column in other units,
// a dependent column (singular: a shift), a zero column (its row becomes the
// identity's), and one that no shift up to 10^2·L makes positive definite
// (the identity in its place).
struct factor_case {
  const char* what;
  std::int64_t L;
  std::vector<double> A;
};

std::vector<factor_case> factor_cases() {
  std::vector<factor_case> cases;
  auto const from_rows = [](const char* what, std::int64_t K, std::int64_t L, const std::vector<double>& X) {
    factor_case c{what, L, std::vector<double>(static_cast<std::size_t>(L * L))};
    for (std::int64_t i = 0; i < L; ++i) {
      for (std::int64_t j = 0; j < L; ++j) {
        long double a = 0;
        for (std::int64_t k = 0; k < K; ++k) { a += static_cast<long double>(X[k * L + i]) * X[k * L + j]; }
        c.A[static_cast<std::size_t>(i * L + j)] = static_cast<double>(a);
      }
    }
    return c;
  };
  for (std::int64_t L : {std::int64_t{1}, std::int64_t{12}, std::int64_t{45}}) {
    std::int64_t const K = 3 * L + 7;
    auto const pr = fusekit::test::make_problem<double>(K, L, 1, static_cast<std::uint32_t>(L) + 3, false, 0.0);
    cases.push_back(from_rows("well conditioned", K, L, pr.X));
    if (L < 12) { continue; }
    std::vector<double> X = pr.X;
    for (std::int64_t k = 0; k < K; ++k) { X[k * L + 2] *= 1e150; }
    cases.push_back(from_rows("a column in units of 1e150", K, L, X));
    X = pr.X;
    for (std::int64_t k = 0; k < K; ++k) { X[k * L + 5] = X[k * L + 3] - 2 * X[k * L + 7]; }
    cases.push_back(from_rows("a dependent column", K, L, X));
    X = pr.X;
    for (std::int64_t k = 0; k < K; ++k) { X[k * L + 0] = 0; }
    cases.push_back(from_rows("a zero column", K, L, X));
  }
  cases.push_back({"indefinite", 2, {1.0, 1000.0, 1000.0, 1.0}});
  return cases;
}

TEST(ThreadedTeam, CholeskyFactorHasTheSerialBitsAndFactorsA) {
  using fusekit::detail::cholesky_factor_body;
  using fusekit::detail::cholesky_outcome;
  for (const factor_case& c : factor_cases()) {
    std::int64_t const L = c.L;
    auto const f = fusekit::detail::make_cholesky(c.A.data(), L);
    std::string const what = std::string(c.what) + ", L " + std::to_string(L);
    if (std::string(c.what) == "indefinite") {
      EXPECT_EQ(f.shift, -1.0) << what;
      EXPECT_EQ(f.G, (std::vector<double>{1, 0, 0, 1})) << what;
      continue;
    }
    if (std::string(c.what) == "a dependent column") {
      EXPECT_GT(f.shift, 0.0) << what;
    } else {
      EXPECT_EQ(f.shift, 0.0) << what;
    }
    // s_i = 1/√a_ii (0 for a zero column), and G Gᵀ = S A S + δI (with the
    // zero column's diagonal 1) within Cholesky's backward error:
    // |ΔA'| ≤ γ_{L+1}·|G||Gᵀ| (Higham, Accuracy and Stability, Thm 10.3),
    // plus A''s own two roundings, 2u·|A'_ij|.
    long double const gamma = (L + 1) * unit / (1 - (L + 1) * unit);
    double smallest = 1;  // the smallest G_jj², each square in double
    for (std::int64_t i = 0; i < L; ++i) {
      long double const a = c.A[static_cast<std::size_t>(i * L + i)];
      long double const s_exact = a > 0 ? 1 / std::sqrt(a) : 0;
      EXPECT_LE(std::fabs(f.s[i] - s_exact), 2 * unit * s_exact) << what << ", s " << i;
      double const g = f.G[static_cast<std::size_t>(i * L + i)];
      smallest = std::min(smallest, g * g);
      for (std::int64_t j = 0; j < L; ++j) {
        if (j > i) {
          EXPECT_EQ(f.G[static_cast<std::size_t>(i * L + j)], 0.0) << what << ": the upper triangle is 0";
          continue;
        }
        long double gg = 0, abs_gg = 0;
        for (std::int64_t k = 0; k <= j; ++k) {
          long double const p = static_cast<long double>(f.G[static_cast<std::size_t>(i * L + k)]) *
                                f.G[static_cast<std::size_t>(j * L + k)];
          gg += p;
          abs_gg += std::fabs(p);
        }
        long double a_scaled = static_cast<long double>(f.s[i]) * c.A[static_cast<std::size_t>(i * L + j)] * f.s[j];
        if (i == j) { a_scaled = (f.s[i] > 0 ? a_scaled : 1) + f.shift; }
        EXPECT_LE(std::fabs(gg - a_scaled), gamma * abs_gg + 2 * unit * std::fabs(a_scaled) + unit * f.shift)
            << what << ", entry " << i << ", " << j;
      }
    }
    EXPECT_EQ(f.smallest_pivot, smallest) << what;
    for (int m : member_counts) {
      for (const run_mode& how : fusekit::test::modes_to_run()) {
        std::vector<double> G(static_cast<std::size_t>(L * L), -1.0), s(static_cast<std::size_t>(L), -1.0);
        std::vector<cholesky_outcome> got(static_cast<std::size_t>(m));
        run_team(m, how, [&](const threaded_team& team) {
          got[static_cast<std::size_t>(team.member())] = cholesky_factor_body(team, c.A.data(), L, G.data(), s.data());
        });
        std::string const where = what + ", " + std::to_string(m) + " members, " + how.name();
        EXPECT_TRUE(same_bits(G, f.G)) << where;
        EXPECT_TRUE(same_bits(s, f.s)) << where;
        for (const cholesky_outcome& o : got) {
          EXPECT_EQ(std::memcmp(&o.shift, &f.shift, sizeof(double)), 0) << where;
          EXPECT_EQ(std::memcmp(&o.smallest_pivot, &f.smallest_pivot, sizeof(double)), 0) << where;
        }
      }
    }
  }
}

// z = S (G Gᵀ)⁻¹ S r in C: the serial loops' bits on every team, and within
// the two triangular solves' backward error (Higham, Thm 8.5: (G + ΔG) x = b,
// |ΔG| ≤ γ_L |G|, with u of C for the values kept in C): for v = S⁻¹ z,
// |G Gᵀ v − S r| ≤ 2γ_{L+2}·(|G||Gᵀ v| + |G||Gᵀ||v|) + u·|S r|.
template <class C>
void expect_solve_on_every_team() {
  long double const u = std::is_same_v<C, float> ? 0x1p-24L : unit;
  std::mt19937_64 rng(29);
  std::normal_distribution<double> normal;
  for (const factor_case& c : factor_cases()) {
    std::int64_t const L = c.L;
    // (L > 12: 2L + 2 barriers a solve; the well-conditioned L = 45 is kept,
    // for the serial team's blocks of columns and rows with their tails.)
    if (std::string(c.what) == "indefinite" || (L > 12 && std::string(c.what) != "well conditioned")) { continue; }
    // In float the 1e150 column's weight (about 1e-151) is below the range: a
    // float fit rescales such a column first (detail/train/prepare.hpp).
    if (std::is_same_v<C, float> && std::string(c.what) == "a column in units of 1e150") { continue; }
    auto const f = fusekit::detail::make_cholesky(c.A.data(), L);
    std::vector<C> r(static_cast<std::size_t>(L)), z(r.size());
    for (C& v : r) { v = static_cast<C>(normal(rng)); }
    std::vector<double> t(r.size());
    fusekit::detail::cholesky_solve(serial_team{}, f.G.data(), f.s.data(), L, r.data(), z.data(), t.data());
    std::string const what = std::string(c.what) + ", L " + std::to_string(L);
    long double const gamma = 2 * (L + 2) * u / (1 - (L + 2) * u);
    std::vector<long double> v(r.size()), gtv(r.size()), abs_gtv(r.size());
    for (std::int64_t i = 0; i < L; ++i) { v[i] = f.s[i] > 0 ? z[i] / static_cast<long double>(f.s[i]) : 0; }
    for (std::int64_t i = 0; i < L; ++i) {  // Gᵀ v and |Gᵀ||v|
      for (std::int64_t k = i; k < L; ++k) {
        long double const g = f.G[static_cast<std::size_t>(k * L + i)];
        gtv[i] += g * v[k];
        abs_gtv[i] += std::fabs(g * v[k]);
      }
    }
    for (std::int64_t i = 0; i < L; ++i) {
      if (f.s[i] == 0) {
        EXPECT_EQ(z[i], C(0)) << what << ": a zero column's weight does not move";
        continue;
      }
      long double lhs = 0, bound = 0;
      for (std::int64_t k = 0; k <= i; ++k) {
        long double const g = f.G[static_cast<std::size_t>(i * L + k)];
        lhs += g * gtv[k];
        bound += std::fabs(g) * (std::fabs(gtv[k]) + abs_gtv[k]);
      }
      long double const sr = static_cast<long double>(f.s[i]) * r[i];
      EXPECT_LE(std::fabs(lhs - sr), gamma * bound + u * std::fabs(sr)) << what << ", row " << i;
    }
    for (int m : member_counts) {
      for (const run_mode& how : fusekit::test::modes_to_run()) {
        std::vector<C> zt(r.size(), C(-7));
        std::vector<double> tt(r.size());
        run_team(m, how, [&](const threaded_team& team) {
          fusekit::detail::cholesky_solve(team, f.G.data(), f.s.data(), L, r.data(), zt.data(), tt.data());
        });
        EXPECT_TRUE(same_bits(zt, z)) << what << ", " << m << " members, " << how.name();
      }
    }
  }
}

TEST(ThreadedTeam, CholeskySolveHasTheSerialBitsAndSolvesInDouble) { expect_solve_on_every_team<double>(); }
TEST(ThreadedTeam, CholeskySolveHasTheSerialBitsAndSolvesInFloat) { expect_solve_on_every_team<float>(); }

// ---- predict's rows, staged in a tile -------------------------------------------

TEST(ThreadedTeam, PredictRowsHaveTheBitsOfPredictAtPlusTheIntercept) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  struct shape {
    std::int64_t K, L, N, rows;
  };
  for (shape const sh : {shape{100, 37, 11, 9}, shape{64, 1, 1, 64}, shape{7, 5, 3, 2}, shape{50, 64, 4, 1}}) {
    std::vector<double> X(static_cast<std::size_t>(sh.K * sh.L)), W(static_cast<std::size_t>(sh.N * sh.L)),
        b(static_cast<std::size_t>(sh.N));
    for (double& v : X) { v = normal(rng); }
    for (double& v : W) { v = normal(rng); }
    for (double& v : b) { v = 1e3 * normal(rng); }
    double const extreme[] = {1e-310, -1e308, 0.0, -0.0};  // subnormal, huge, both zeros
    for (std::size_t n = 0; n < b.size() && n < 4; ++n) { b[n] = extreme[n]; }
    for (bool const intercept : {false, true}) {
      // Y_hat[k, n] = (Σ_l X[k, l]·W[n, l], l in order) + b[n]: the sum rounded first.
      std::vector<double> expected(static_cast<std::size_t>(sh.K * sh.N));
      for (std::int64_t k = 0; k < sh.K; ++k) {
        for (std::int64_t n = 0; n < sh.N; ++n) {
          double s = 0;
          for (std::int64_t l = 0; l < sh.L; ++l) { s += X[k * sh.L + l] * W[n * sh.L + l]; }
          expected[static_cast<std::size_t>(k * sh.N + n)] = intercept ? s + b[n] : s;
        }
      }
      for (int m : member_counts) {
        for (const run_mode& how : fusekit::test::modes_to_run()) {
          // One team takes every tile of rows in turn with one staging tile, as a
          // block of the kernel does; a canary past the end must stay.
          std::vector<double> Y(expected.size() + 1, std::numeric_limits<double>::quiet_NaN());
          Y.back() = 1234.5;
          std::vector<double> tile(static_cast<std::size_t>(sh.rows * fusekit::detail::predict_tile_stride(sh.L)));
          run_team(m, how, [&](const threaded_team& team) {
            for (std::int64_t k0 = 0; k0 < sh.K; k0 += sh.rows) {
              fusekit::detail::predict_rows_body(team, k0, sh.K - k0 < sh.rows ? sh.K - k0 : sh.rows, X.data(),
                                                 W.data(), intercept ? b.data() : nullptr, Y.data(), sh.L, sh.N,
                                                 tile.data());
            }
          });
          EXPECT_EQ(Y.back(), 1234.5);
          Y.pop_back();
          EXPECT_TRUE(same_bits(Y, expected))
              << "K " << sh.K << ", L " << sh.L << ", N " << sh.N << ", rows " << sh.rows << ", " << m << " members, "
              << how.name() << (intercept ? ", intercept" : "");
        }
      }
    }
  }
}

}  // namespace
