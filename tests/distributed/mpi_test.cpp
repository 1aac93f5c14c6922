// SPDX-License-Identifier: Apache-2.0
// fusekit::mpi under mpirun (ctest runs this with 1, 2, 3 and 4 ranks).
// Every rank builds the same global data and the same random splits from one
// seed, takes its shard, and checks the distributed result against the
// single-process call over all the data, which it computes too:
//   * deterministic sums, reduces and transform_reduces: the same bits, for
//     random splits with empty shards, shards of one value and shards given at
//     explicit offsets in any rank order;
//   * the other algorithms: within their bound;
//   * fit (Gram and direct): the same W and statuses on every rank, the
//     single-process W within the bound (its bits with one rank);
//   * bad input on one rank: every rank throws the same invalid_argument.
#include <fusekit/mpi.hpp>

#include "../common/test_support.hpp"
#include "../common/train_problem.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

int rank_here() { return fusekit::detail::mpi_rank(MPI_COMM_WORLD); }
int ranks_here() { return fusekit::detail::mpi_size(MPI_COMM_WORLD); }

// Random cut points: every rank draws the same ones (same seed). Some shards
// are empty, some hold one value.
std::vector<fusekit::detail::shard> split(std::int64_t n, std::mt19937& rng) {
  int const ranks = ranks_here();
  std::vector<std::int64_t> cuts{0, n};
  for (int r = 1; r < ranks; ++r) {
    switch (rng() % 4) {
      case 0:
        cuts.push_back(cuts[rng() % cuts.size()]);
        break;
      case 1:
        cuts.push_back(std::min<std::int64_t>(n, cuts[rng() % cuts.size()] + 1));
        break;
      default:
        cuts.push_back(n > 0 ? static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1)) : 0);
    }
  }
  std::sort(cuts.begin(), cuts.end());
  std::vector<fusekit::detail::shard> pieces;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) { pieces.push_back({cuts[k], cuts[k + 1] - cuts[k]}); }
  return pieces;
}

// Random blocks with at least one value on every rank (n ≥ ranks): a fit whose
// rows all sit on one rank would hide a rank sum that counts a rank twice.
std::vector<fusekit::detail::shard> spread(std::int64_t n, std::mt19937& rng) {
  int const ranks = ranks_here();
  std::vector<std::int64_t> cuts{0, n};
  while (static_cast<int>(cuts.size()) < ranks + 1) {
    std::int64_t const c = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n - 1));
    if (std::find(cuts.begin(), cuts.end(), c) == cuts.end()) { cuts.push_back(c); }
  }
  std::sort(cuts.begin(), cuts.end());
  std::vector<fusekit::detail::shard> pieces;
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) { pieces.push_back({cuts[k], cuts[k + 1] - cuts[k]}); }
  return pieces;
}

template <class T>
std::vector<T> values(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) { x = static_cast<T>(u(rng) * (rng() % 5 == 0 ? 1e5 : 1.0)); }
  return v;
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

TEST(Mpi, DeterministicSumHasTheSingleProcessBitsForAnySplit) {
  std::mt19937 rng(1234);
  std::int64_t const tile = fusekit::detail::tree_tile;
  std::vector<std::int64_t> sizes = {0, 1, 2, 7, tile - 1, tile, tile + 1, 3 * tile + 5, 100003};
  for (int trial = 0; trial < 12; ++trial) { sizes.push_back(static_cast<std::int64_t>(rng() % (6 * tile))); }
  int const me = rank_here();
  for (std::int64_t n : sizes) {
    auto const x = values<float>(n, static_cast<unsigned>(n) + 5);
    float const single = fusekit::sum(fusekit::cpu{}, x, fusekit::reduce_algorithm::deterministic);
    for (int layout = 0; layout < 3; ++layout) {
      auto pieces = split(n, rng);
      if (layout == 2) { std::shuffle(pieces.begin(), pieces.end(), rng); }  // rank r holds any piece
      auto const& mine = pieces[static_cast<std::size_t>(me)];
      ::cuda::std::span<const float> const shard(x.data() + mine.offset, static_cast<std::size_t>(mine.size));
      // Layout 0: the implicit split (the pieces in rank order); 1 and 2: explicit offsets.
      fusekit::mpi const implicit{MPI_COMM_WORLD};
      fusekit::mpi const world = layout == 0 ? implicit : implicit.at(mine.offset);
      float const got = fusekit::sum(world, shard, fusekit::reduce_algorithm::deterministic);
      ASSERT_TRUE(same_bits(got, single)) << "n " << n << ", layout " << layout << ": " << got << " vs " << single;
      double const got_d =
          fusekit::sum(world, shard, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<double>{});
      double const single_d =
          fusekit::sum(fusekit::cpu{}, x, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<double>{});
      ASSERT_TRUE(same_bits(got_d, single_d)) << "n " << n;
    }
  }
}

TEST(Mpi, DeterministicReduceAndTransformReduceToo) {
  std::mt19937 rng(77);
  std::int64_t const n = 5 * fusekit::detail::tree_tile + 321;
  auto const a = values<float>(n, 1), b = values<float>(n, 2);
  auto const pieces = split(n, rng);
  auto const& mine = pieces[static_cast<std::size_t>(rank_here())];
  ::cuda::std::span<const float> const sa(a.data() + mine.offset, static_cast<std::size_t>(mine.size));
  ::cuda::std::span<const float> const sb(b.data() + mine.offset, static_cast<std::size_t>(mine.size));
  fusekit::mpi const world{MPI_COMM_WORLD};
  auto const det = fusekit::reduce_algorithm::deterministic;
  double const dot = fusekit::transform_reduce(world, det, fusekit::accumulate_in<double>{}, fusekit::weigh{}, sa, sb);
  double const dot1 = fusekit::transform_reduce(fusekit::cpu{}, det, fusekit::accumulate_in<double>{}, fusekit::weigh{},
                                                ::cuda::std::span<const float>(a), ::cuda::std::span<const float>(b));
  EXPECT_TRUE(same_bits(dot, dot1));
  float lo = 0, lo1 = 0, hi = 0, hi1 = 0;
  fusekit::reduce(world, sa, &lo, fusekit::minimum{}, INFINITY);
  fusekit::reduce(fusekit::cpu{}, ::cuda::std::span<const float>(a), &lo1, fusekit::minimum{}, INFINITY);
  fusekit::reduce(world, sa, &hi, fusekit::maximum{}, -INFINITY, fusekit::reduce_algorithm::run_to_run);  // MPI_MAX
  fusekit::reduce(fusekit::cpu{}, ::cuda::std::span<const float>(a), &hi1, fusekit::maximum{}, -INFINITY);
  EXPECT_EQ(lo, lo1);
  EXPECT_EQ(hi, hi1);
}

TEST(Mpi, OtherAlgorithmsAreWithinTheirBound) {
  std::mt19937 rng(5);
  std::int64_t const n = 200001;
  auto const x = values<float>(n, 9);
  long double abs_sum = 0;
  long double const exact = fusekit::test::exact_sum(x, &abs_sum);
  auto const pieces = split(n, rng);
  auto const& mine = pieces[static_cast<std::size_t>(rank_here())];
  ::cuda::std::span<const float> const shard(x.data() + mine.offset, static_cast<std::size_t>(mine.size));
  for (auto a : {fusekit::reduce_algorithm::naive_atomic, fusekit::reduce_algorithm::block_atomic,
                 fusekit::reduce_algorithm::run_to_run}) {
    double const s = fusekit::sum(fusekit::mpi{MPI_COMM_WORLD}, shard, a, fusekit::accumulate_in<double>{});
    EXPECT_LE(std::fabs(static_cast<long double>(s) - exact), 1e-12L * abs_sum * n) << fusekit::to_string(a);
  }
}

// W and the statuses of every rank, compared with rank 0's bytes.
template <class T>
bool same_on_every_rank(const std::vector<T>& w, const fusekit::fit_report& r) {
  std::vector<double> mine(w.begin(), w.end());
  for (const auto& o : r.outputs) { mine.push_back(static_cast<double>(static_cast<int>(o.status))); }
  std::vector<double> root = mine;
  MPI_Bcast(root.data(), static_cast<int>(root.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int const same = std::memcmp(root.data(), mine.data(), mine.size() * sizeof(double)) == 0 ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

TEST(Mpi, FitMatchesTheSingleProcessFitOnEveryRank) {
  std::int64_t const K = 3001, L = 6, N = 3;
  auto const p = fusekit::test::make_problem<double>(K, L, N, 3, false, 0.01);
  std::mt19937 rng(11);
  auto const pieces = spread(K, rng);  // blocks of rows, at least one on every rank
  auto const& mine = pieces[static_cast<std::size_t>(rank_here())];
  ASSERT_GT(mine.size, 0);
  using cm = fusekit::matrix<const double>;
  using m = fusekit::matrix<double>;
  cm const X(p.X.data() + mine.offset * L, mine.size, L), Y(p.Y.data() + mine.offset * N, mine.size, N);
  for (auto f : {fusekit::gd_formulation::gram, fusekit::gd_formulation::direct}) {
    fusekit::gd_options o;
    o.formulation = f;
    o.tolerance = 1e-14;
    o.max_iterations = 5000;
    std::vector<double> W(N * L, 0.0), W1(N * L, 0.0);
    auto const r = fusekit::fit(fusekit::mpi{MPI_COMM_WORLD}, X, Y, m(W.data(), N, L), o);
    auto const r1 = fusekit::fit(fusekit::cpu{}, cm(p.X.data(), K, L), cm(p.Y.data(), K, N), m(W1.data(), N, L), o);
    EXPECT_TRUE(same_on_every_rank(W, r)) << "formulation " << static_cast<int>(f);
    for (std::size_t n = 0; n < r.outputs.size(); ++n) { EXPECT_EQ(r.outputs[n].status, r1.outputs[n].status); }
    EXPECT_EQ(r.learning_rate > 0, true);
    for (std::size_t i = 0; i < W.size(); ++i) {
      if (ranks_here() == 1) {
        EXPECT_TRUE(same_bits(W[i], W1[i])) << i;  // one rank: the single-process fit, bit for bit
      } else {
        EXPECT_NEAR(W[i], W1[i], 1e-9 * (1 + std::fabs(W1[i]))) << i;
      }
    }
    // predict is local: each rank's rows.
    std::vector<double> Y_hat(static_cast<std::size_t>(mine.size * N));
    fusekit::predict(fusekit::mpi{MPI_COMM_WORLD}, X, cm(W.data(), N, L), m(Y_hat.data(), mine.size, N));
    for (std::size_t i = 0; i < Y_hat.size(); ++i) { EXPECT_NEAR(Y_hat[i], Y.data_handle()[i], 0.1); }
  }
}

// The recommended method across ranks, in both forms. Gram: A and B summed
// once, then the same CG on every rank. Direct (CGLS): each rank keeps its
// rows of ρ, and qᵀq and r = Xᵀρ are summed at every iteration. Either way the
// single-process fit's answer, its bits on one rank.
TEST(Mpi, ConjugateGradientMatchesTheSingleProcessFit) {
  std::int64_t const K = 3001, L = 7, N = 2;
  auto const p = fusekit::test::make_raw_problem<double>(K, L, N, 5, 0.1);
  auto const W_star = fusekit::test::least_squares_reference(p);
  std::mt19937 rng(12);
  auto const pieces = spread(K, rng);
  auto const& mine = pieces[static_cast<std::size_t>(rank_here())];
  using cm = fusekit::matrix<const double>;
  using m = fusekit::matrix<double>;
  cm const X(p.X.data() + mine.offset * L, mine.size, L), Y(p.Y.data() + mine.offset * N, mine.size, N);
  for (auto f : {fusekit::gd_formulation::gram, fusekit::gd_formulation::direct}) {
    SCOPED_TRACE(f == fusekit::gd_formulation::gram ? "gram" : "direct (CGLS)");
    fusekit::gd_options o = fusekit::gd_options::recommended();
    o.formulation = f;
    std::vector<double> W(N * L, 0.0), W1(N * L, 0.0);
    auto const r = fusekit::fit(fusekit::mpi{MPI_COMM_WORLD}, X, Y, m(W.data(), N, L), o);
    auto const r1 = fusekit::fit(fusekit::cpu{}, cm(p.X.data(), K, L), cm(p.Y.data(), K, N), m(W1.data(), N, L), o);
    EXPECT_EQ(r.formulation, f);
    EXPECT_TRUE(same_on_every_rank(W, r));
    EXPECT_TRUE(r.all_converged() && r1.all_converged());
    if (ranks_here() == 1) {
      for (std::size_t i = 0; i < W.size(); ++i) { EXPECT_TRUE(same_bits(W[i], W1[i])) << i; }
      for (std::size_t n = 0; n < r.outputs.size(); ++n) {
        EXPECT_EQ(r.outputs[n].iterations, r1.outputs[n].iterations);
      }
    }
    // Any split: the sums over rows run in another order, and both fits meet
    // the relative rule, so both are the least-squares solution to the
    // recommended method's 1e-8.
    EXPECT_LE(fusekit::test::relative_error(W, W_star), 1e-8);
    EXPECT_LE(fusekit::test::relative_error(W1, W_star), 1e-8);
  }
}

// Ridge, an intercept and sample weights across ranks: the weighted means
// and the ridge's rows (rank 0's) give the single-process fit's answer.
TEST(Mpi, RidgeInterceptAndWeightsMatchTheSingleProcessFit) {
  std::int64_t const K = 2001, L = 6, N = 2;
  auto const p = fusekit::test::make_raw_problem<double>(K, L, N, 8, 0.2);
  std::vector<double> s(static_cast<std::size_t>(K));
  for (std::int64_t k = 0; k < K; ++k) { s[k] = static_cast<double>(k % 5) / 2.0; }
  std::mt19937 rng(13);
  auto const pieces = spread(K, rng);
  auto const& mine = pieces[static_cast<std::size_t>(rank_here())];
  using cm = fusekit::matrix<const double>;
  using m = fusekit::matrix<double>;
  cm const X(p.X.data() + mine.offset * L, mine.size, L), Y(p.Y.data() + mine.offset * N, mine.size, N);
  fusekit::gd_options o = fusekit::gd_options::recommended();
  o.ridge = 0.3;
  o.fit_intercept = true;
  std::vector<double> W(N * L), W1(N * L), b(N), b1(N);
  ::cuda::std::span<const double> const my_weights(s.data() + mine.offset, static_cast<std::size_t>(mine.size));
  auto const r = fusekit::fit(fusekit::mpi{MPI_COMM_WORLD}, X, Y, m(W.data(), N, L), o,
                              fusekit::fit_extras<double>{my_weights, b});
  auto const r1 = fusekit::fit(fusekit::cpu{}, cm(p.X.data(), K, L), cm(p.Y.data(), K, N), m(W1.data(), N, L), o,
                               fusekit::fit_extras<double>{s, b1});
  EXPECT_TRUE(r.all_converged() && r1.all_converged());
  EXPECT_TRUE(same_on_every_rank(W, r));
  for (std::size_t i = 0; i < W.size(); ++i) { EXPECT_NEAR(W[i], W1[i], 1e-10 * (1 + std::fabs(W1[i]))) << i; }
  for (std::int64_t n = 0; n < N; ++n) { EXPECT_NEAR(b[n], b1[n], 1e-10 * (1 + std::fabs(b1[n]))) << n; }
}

// A shard may be empty, also in a weighted fit: the rank without rows passes
// an empty weight span and takes part (docs/distributed.md). Rank 0 holds
// no rows, the others split K; the weights are subnormal (a common factor:
// the unweighted answer), and every weight 0 on every rank is rejected on
// every rank naming sample_weight.
TEST(Mpi, AnEmptyShardJoinsAWeightedFit) {
  if (ranks_here() < 2) { GTEST_SKIP() << "needs 2 ranks or more"; }
  std::int64_t const K = 301, L = 4, N = 2;
  auto const p = fusekit::test::make_raw_problem<double>(K, L, N, 9, 0.2);
  int const others = ranks_here() - 1, me = rank_here() - 1;
  std::int64_t const first = me < 0 ? 0 : K * me / others, last = me < 0 ? 0 : K * (me + 1) / others;
  using cm = fusekit::matrix<const double>;
  using m = fusekit::matrix<double>;
  cm const X(p.X.data() + first * L, last - first, L), Y(p.Y.data() + first * N, last - first, N);
  fusekit::gd_options o = fusekit::gd_options::recommended();
  o.fit_intercept = true;
  std::vector<double> const s(static_cast<std::size_t>(K), 1e-310), ones(static_cast<std::size_t>(K), 1.0);
  std::vector<double> W(N * L), W1(N * L), b(N), b1(N);
  ::cuda::std::span<const double> const mine(s.data() + first, static_cast<std::size_t>(last - first));
  auto const r =
      fusekit::fit(fusekit::mpi{MPI_COMM_WORLD}, X, Y, m(W.data(), N, L), o, fusekit::fit_extras<double>{mine, b});
  auto const r1 = fusekit::fit(fusekit::cpu{}, cm(p.X.data(), K, L), cm(p.Y.data(), K, N), m(W1.data(), N, L), o,
                               fusekit::fit_extras<double>{ones, b1});
  EXPECT_TRUE(r.all_converged() && r1.all_converged()) << r.summary();
  EXPECT_TRUE(same_on_every_rank(W, r));
  for (std::size_t i = 0; i < W.size(); ++i) { EXPECT_NEAR(W[i], W1[i], 1e-10 * (1 + std::fabs(W1[i]))) << i; }
  for (std::int64_t n = 0; n < N; ++n) { EXPECT_NEAR(b[n], b1[n], 1e-10 * (1 + std::fabs(b1[n]))) << n; }
  std::vector<double> const zeros(static_cast<std::size_t>(K), 0.0);
  ::cuda::std::span<const double> const none(zeros.data() + first, static_cast<std::size_t>(last - first));
  try {
    fusekit::fit(fusekit::mpi{MPI_COMM_WORLD}, X, Y, m(W.data(), N, L), o, fusekit::fit_extras<double>{none, b});
    ADD_FAILURE() << "accepted";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("every sample_weight is 0"), std::string::npos) << e.what();
  }
}

// A failing MPI call throws fusekit::mpi_error with MPI's code and string and
// the call, once the communicator returns errors instead of aborting.
TEST(Mpi, AFailingCallThrowsMpiErrorWithMpisMessage) {
  MPI_Comm comm = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &comm), MPI_SUCCESS);
  ASSERT_EQ(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN), MPI_SUCCESS);
  int const mine = 1;
  int sum = 0;
  try {
    // A negative count is an MPI error (MPI_ERR_COUNT) on every rank.
    FUSEKIT_MPI_TRY(MPI_Allreduce(&mine, &sum, -1, MPI_INT, MPI_SUM, comm));
    ADD_FAILURE() << "no exception";
  } catch (const fusekit::mpi_error& e) {
    EXPECT_NE(e.code(), MPI_SUCCESS);
    std::string const what = e.what();
    EXPECT_NE(what.find("MPI_Allreduce"), std::string::npos) << what;
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(e.code(), text, &length);
    EXPECT_NE(what.find(std::string(text, static_cast<std::size_t>(length))), std::string::npos) << what;
  }
  MPI_Comm_free(&comm);
}

// The documentation's snippets (tests/snippets/check_snippets.py finds them in docs/distributed.md and mpi.hpp).
TEST(Mpi, DocumentationSnippets) {
  std::int64_t const K = 64, L = 3, N = 2;
  auto const p = fusekit::test::make_problem<double>(K, L, N, 4, false, 0.0);
  std::vector<float> my_shard(1000, 0.5f);
  fusekit::matrix<const double> const my_X_rows(p.X.data(), K, L), my_Y_rows(p.Y.data(), K, N);
  std::vector<double> w(N * L, 0.0);
  fusekit::matrix<double> const W(w.data(), N, L);
  fusekit::gd_options options;
  {
    // clang-format off
    // snippet: docs/distributed.md
    fusekit::mpi const world{MPI_COMM_WORLD};
    float s = fusekit::sum(world, my_shard, fusekit::reduce_algorithm::deterministic);
    fusekit::fit_report r = fusekit::fit(world, my_X_rows, my_Y_rows, W, options);
    // end snippet
    // clang-format on
    EXPECT_EQ(s, 500.0f * static_cast<float>(ranks_here()));
    EXPECT_TRUE(r.all_converged());
  }
  {
    // clang-format off
    // snippet: include/fusekit/mpi.hpp
    fusekit::mpi const world{MPI_COMM_WORLD};          // fusekit::cpu on each rank, MPI between them
    float s = fusekit::sum(world, my_shard, fusekit::reduce_algorithm::deterministic);
    fusekit::fit_report r = fusekit::fit(world, my_X_rows, my_Y_rows, W, options);
    // end snippet
    // clang-format on
    EXPECT_EQ(s, 500.0f * static_cast<float>(ranks_here()));
    EXPECT_TRUE(r.all_converged());
  }
}

// Bad input on one rank: every rank throws, with that rank's message; none waits.
TEST(Mpi, BadInputOnOneRankThrowsOnEveryRank) {
  int const last = ranks_here() - 1;
  std::vector<float> x(100, 1.0f);
  ::cuda::std::span<const float> const bad(static_cast<const float*>(nullptr), std::size_t{5});
  ::cuda::std::span<const float> const good(x);
  fusekit::mpi const world{MPI_COMM_WORLD};
  try {
    (void)fusekit::sum(world, rank_here() == last ? bad : good);
    ADD_FAILURE() << "no exception";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(rank " + std::to_string(last) + ")"), std::string::npos) << e.what();
  }
  // Shards with a gap: every rank sees the same layout and throws the same.
  std::int64_t const offset = rank_here() == last ? 1000000 : 100 * rank_here();
  EXPECT_THROW((void)fusekit::sum(world.at(offset), good), fusekit::invalid_argument);
  // L differs on one rank.
  std::vector<double> X(20, 1.0), Y(10, 1.0), W(4, 0.0);
  std::int64_t const L = rank_here() == last && ranks_here() > 1 ? 2 : 1;
  try {
    (void)fusekit::fit(world, fusekit::matrix<const double>(X.data(), 10 / L, L),
                       fusekit::matrix<const double>(Y.data(), 10 / L, 1), fusekit::matrix<double>(W.data(), 1, L));
    if (ranks_here() > 1) { ADD_FAILURE() << "no exception"; }
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("every rank must pass the same (L (columns of X))"), std::string::npos)
        << e.what();
  }
  // Everyone is still here.
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

// Bad input on several ranks at once, each its own: every rank throws the
// lowest failing rank's message (rank 1's here: rank 0's input is good).
TEST(Mpi, BadInputOnSeveralRanksThrowsTheLowestFailingRanksMessage) {
  if (ranks_here() < 3) { GTEST_SKIP() << "needs 3 ranks or more"; }
  std::vector<float> x(100, 1.0f);
  fusekit::mpi const world{MPI_COMM_WORLD};
  // rank r > 0 passes a null span of r elements: a message that names r and its count
  ::cuda::std::span<const float> const mine =
      rank_here() == 0 ? ::cuda::std::span<const float>(x)
                       : ::cuda::std::span<const float>(static_cast<const float*>(nullptr), std::size_t(rank_here()));
  try {
    (void)fusekit::sum(world, mine);
    ADD_FAILURE() << "no exception";
  } catch (const fusekit::invalid_argument& e) {
    std::string const what = e.what();
    EXPECT_NE(what.find("(rank 1)"), std::string::npos) << what;
    EXPECT_NE(what.find("has 1 elements"), std::string::npos) << what;
    for (int r = 2; r < ranks_here(); ++r) {
      EXPECT_EQ(what.find("(rank " + std::to_string(r) + ")"), std::string::npos) << what;
    }
  }
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

// What every rank must pass alike, passed differently by the last rank: every
// rank throws the same invalid_argument, naming what differs, and none waits
// (each used to hang, corrupt the heap or give ranks different answers).
template <class F>
void expect_disagreement(const char* what, const F& call) {
  if (ranks_here() == 1) {
    EXPECT_NO_THROW(call(false)) << what;
    return;
  }
  try {
    call(rank_here() == ranks_here() - 1);
    ADD_FAILURE() << what << ": no exception";
  } catch (const fusekit::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(std::string("every rank must pass the same (") + what + ")"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

TEST(Mpi, ArgumentsThatDifferAcrossRanksThrowOnEveryRank) {
  fusekit::mpi const world{MPI_COMM_WORLD};
  std::int64_t const K = 40, L = 3, N = 2;
  auto const p = fusekit::test::make_problem<double>(K * ranks_here(), L, N, 4, false, 0.01);
  using cm = fusekit::matrix<const double>;
  cm const X(p.X.data() + rank_here() * K * L, K, L), Y(p.Y.data() + rank_here() * K * N, K, N);
  std::vector<double> W(N * L);
  auto const fit_with = [&](fusekit::gd_formulation f, auto change) {
    return [&, f, change](bool differ) {
      fusekit::gd_options o;
      o.formulation = f;
      o.max_iterations = 50;
      if (differ) { change(o); }
      (void)fusekit::fit(world, X, Y, fusekit::matrix<double>(W.data(), N, L), o);
    };
  };
  for (auto f : {fusekit::gd_formulation::direct, fusekit::gd_formulation::gram}) {
    expect_disagreement("tolerance", fit_with(f, [](fusekit::gd_options& o) { o.tolerance = 1e-3; }));
    expect_disagreement("max_iterations", fit_with(f, [](fusekit::gd_options& o) { o.max_iterations = 7; }));
    expect_disagreement("method", fit_with(f, [](fusekit::gd_options& o) { o.method = fusekit::gd_method::nesterov; }));
    expect_disagreement("refinement_steps", fit_with(f, [](fusekit::gd_options& o) { o.refinement_steps = 2; }));
    expect_disagreement("relative_tolerance", fit_with(f, [](fusekit::gd_options& o) { o.relative_tolerance = 1e-6; }));
    expect_disagreement("learning_rate", fit_with(f, [](fusekit::gd_options& o) { o.learning_rate = 1e-3; }));
    expect_disagreement("init", fit_with(f, [](fusekit::gd_options& o) { o.init = fusekit::gd_init::uniform; }));
    expect_disagreement("seed", fit_with(f, [](fusekit::gd_options& o) { o.seed = 9; }));
    expect_disagreement("formulation", fit_with(f, [f](fusekit::gd_options& o) {
                          o.formulation = f == fusekit::gd_formulation::gram ? fusekit::gd_formulation::direct
                                                                             : fusekit::gd_formulation::gram;
                        }));
    expect_disagreement("preconditioner", fit_with(f, [](fusekit::gd_options& o) {
                          o.preconditioner = fusekit::gd_preconditioner::jacobi;
                        }));
    expect_disagreement("stall_window", fit_with(f, [](fusekit::gd_options& o) { o.stall_window = 7; }));
    expect_disagreement("progress_every", fit_with(f, [](fusekit::gd_options& o) { o.progress_every = 7; }));
    // A warm start that differs: the ranks would iterate apart (and, with a
    // progress callback, make different numbers of collective calls).
    expect_disagreement("W (the warm start)", [&](bool differ) {
      fusekit::gd_options o;
      o.formulation = f;
      o.init = fusekit::gd_init::warm_start;
      o.max_iterations = 50;
      std::vector<double> W0(N * L, differ ? 1.0 : 0.5);
      (void)fusekit::fit(world, X, Y, fusekit::matrix<double>(W0.data(), N, L), o);
    });
    expect_disagreement("ridge", fit_with(f, [](fusekit::gd_options& o) { o.ridge = 0.5; }));
    expect_disagreement("fit_intercept", fit_with(f, [](fusekit::gd_options& o) { o.fit_intercept = true; }));
    expect_disagreement("progress (set or not)",
                        fit_with(f, [](fusekit::gd_options& o) { o.progress = [](const fusekit::fit_progress&) {}; }));
  }
  std::vector<float> xf(1000, 1.5f);
  std::vector<double> xd(1000, 1.5);
  expect_disagreement("algorithm", [&](bool differ) {
    (void)fusekit::sum(world, xf,
                       differ ? fusekit::reduce_algorithm::run_to_run : fusekit::reduce_algorithm::deterministic);
  });
  expect_disagreement("init", [&](bool differ) {
    float lo = 0;
    fusekit::reduce(world, ::cuda::std::span<const float>(xf), &lo, fusekit::minimum{}, differ ? -5.0f : INFINITY);
  });
  // A float shard on one rank, double on the others (MPI_Alltoallv wrote
  // doubles into a float buffer).
  expect_disagreement("element type", [&](bool differ) {
    double s = 0;
    if (differ) {
      fusekit::reduce_sum(world, ::cuda::std::span<const float>(xf), &s);
    } else {
      fusekit::reduce_sum(world, ::cuda::std::span<const double>(xd), &s);
    }
  });
  expect_disagreement("accumulator type", [&](bool differ) {
    if (differ) {
      (void)fusekit::sum(world, xf, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<double>{});
    } else {
      (void)fusekit::sum(world, xf);
    }
  });
}

// A progress callback that throws on one rank: every rank stops at the same
// iteration, the thrower with its own exception, the others with one that
// names it; none waits.
TEST(Mpi, ProgressCallbackThrowingOnOneRankStopsEveryRank) {
  struct stop_here {};
  std::int64_t const K = 40, L = 3, N = 2;
  auto const p = fusekit::test::make_problem<double>(K * ranks_here(), L, N, 4, false, 0.01);
  using cm = fusekit::matrix<const double>;
  cm const X(p.X.data() + rank_here() * K * L, K, L), Y(p.Y.data() + rank_here() * K * N, K, N);
  int const thrower = ranks_here() - 1;
  for (auto f : {fusekit::gd_formulation::direct, fusekit::gd_formulation::gram}) {
    fusekit::gd_options o;
    o.formulation = f;
    o.tolerance = 1e-300;
    o.max_iterations = 10000;
    o.progress_every = 10;
    std::int64_t last_seen = 0;
    o.progress = [&](const fusekit::fit_progress& now) {
      last_seen = now.iteration;
      if (rank_here() == thrower && now.iteration == 30) { throw stop_here{}; }
    };
    std::vector<double> W(N * L);
    bool own = false, named = false;
    try {
      (void)fusekit::fit(fusekit::mpi{MPI_COMM_WORLD}, X, Y, fusekit::matrix<double>(W.data(), N, L), o);
    } catch (const stop_here&) { own = true; } catch (const std::runtime_error& e) {
      named = std::string(e.what()).find("threw on rank " + std::to_string(thrower)) != std::string::npos;
    }
    EXPECT_EQ(own, rank_here() == thrower);
    EXPECT_EQ(named, rank_here() != thrower);
    EXPECT_EQ(last_seen, 30);
    EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
  }
}

// A NaN on one rank gives NaN on every rank, for every algorithm: the ranks'
// results are folded with fusekit's minimum and maximum (IEEE 754-2019's),
// not with MPI_MIN and MPI_MAX, whose NaN rules are the MPI library's. Without
// a NaN, min and max are exact, so every algorithm gives the single-process bits.
TEST(Mpi, NanOnOneRankGivesNanOnEveryRank) {
  std::vector<float> x(3000);
  for (std::size_t i = 0; i < x.size(); ++i) { x[i] = static_cast<float>((i * 7919) % 3001) - 1500.0f + rank_here(); }
  fusekit::mpi const world{MPI_COMM_WORLD};
  for (auto a : {fusekit::reduce_algorithm::run_to_run, fusekit::reduce_algorithm::deterministic}) {
    float lo = 0, hi = 0;
    fusekit::reduce(world, ::cuda::std::span<const float>(x), &lo, fusekit::minimum{}, INFINITY, a);
    fusekit::reduce(world, ::cuda::std::span<const float>(x), &hi, fusekit::maximum{}, -INFINITY, a);
    EXPECT_EQ(lo, -1500.0f) << fusekit::to_string(a);
    EXPECT_EQ(hi, 1500.0f + static_cast<float>(ranks_here() - 1)) << fusekit::to_string(a);
    std::vector<float> y = x;
    if (rank_here() == ranks_here() - 1) { y[1234] = NAN; }
    fusekit::reduce(world, ::cuda::std::span<const float>(y), &lo, fusekit::minimum{}, INFINITY, a);
    fusekit::reduce(world, ::cuda::std::span<const float>(y), &hi, fusekit::maximum{}, -INFINITY, a);
    EXPECT_TRUE(std::isnan(lo) && std::isnan(hi)) << fusekit::to_string(a) << ": " << lo << ", " << hi;
  }
}

// MPI_COMM_NULL and shard offsets that cannot be: invalid_argument, before any
// MPI call for the null communicator (MPI's default handler ended the job).
// Rows sharded: every rank sums its own rows and segments, each with the bits
// of the single sum of that row (and of the single-process call), whatever
// the split; rows of 0 to 3·tile values, float into float and into double.
TEST(Mpi, RowAndSegmentSumsAreEachRowsSingleSum) {
  std::mt19937 rng(99);
  std::int64_t const tile = fusekit::detail::tree_tile;
  std::vector<std::int64_t> lengths;
  for (int s = 0; s < 60; ++s) {
    lengths.push_back(s % 7 == 0    ? 0
                      : s % 11 == 0 ? tile + static_cast<std::int64_t>(rng() % (2 * tile))
                                    : static_cast<std::int64_t>(rng() % 40));
  }
  std::vector<std::int64_t> offsets{0};
  for (std::int64_t n : lengths) { offsets.push_back(offsets.back() + n); }
  auto const x = values<float>(offsets.back(), 31);
  int const me = rank_here();
  for (int trial = 0; trial < 4; ++trial) {
    auto const pieces = split(static_cast<std::int64_t>(lengths.size()), rng);  // this rank's segments
    auto const& mine = pieces[static_cast<std::size_t>(me)];
    std::int64_t const first = offsets[static_cast<std::size_t>(mine.offset)];
    std::vector<std::int64_t> local_offsets;
    for (std::int64_t s = mine.offset; s <= mine.offset + mine.size; ++s) {
      local_offsets.push_back(offsets[static_cast<std::size_t>(s)] - first);
    }
    ::cuda::std::span<const float> const shard(x.data() + first, static_cast<std::size_t>(local_offsets.back()));
    std::vector<float> out(static_cast<std::size_t>(mine.size));
    std::vector<double> out_d(out.size());
    fusekit::segmented_sum(fusekit::mpi{MPI_COMM_WORLD}, shard, ::cuda::std::span<const std::int64_t>(local_offsets),
                           ::cuda::std::span<float>(out));
    fusekit::segmented_sum(fusekit::mpi{MPI_COMM_WORLD}, shard, ::cuda::std::span<const std::int64_t>(local_offsets),
                           ::cuda::std::span<double>(out_d));
    for (std::int64_t s = 0; s < mine.size; ++s) {
      auto const row = shard.subspan(static_cast<std::size_t>(local_offsets[static_cast<std::size_t>(s)]),
                                     static_cast<std::size_t>(lengths[static_cast<std::size_t>(mine.offset + s)]));
      float const single = fusekit::sum(fusekit::cpu{}, row);
      double const single_d =
          fusekit::sum(fusekit::cpu{}, row, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<double>{});
      ASSERT_TRUE(same_bits(out[static_cast<std::size_t>(s)], single)) << "segment " << mine.offset + s;
      ASSERT_TRUE(same_bits(out_d[static_cast<std::size_t>(s)], single_d)) << "segment " << mine.offset + s;
    }
  }
  // Row sums of this rank's rows of a K × 37 matrix.
  std::int64_t const K = 50, L = 37;
  auto const X = values<double>(K * L, 8);
  auto const rows = split(K, rng)[static_cast<std::size_t>(me)];
  std::vector<double> sums(static_cast<std::size_t>(rows.size));
  fusekit::row_sums(fusekit::mpi{MPI_COMM_WORLD},
                    fusekit::matrix<const double>(X.data() + rows.offset * L, rows.size, L),
                    ::cuda::std::span<double>(sums));
  for (std::int64_t k = 0; k < rows.size; ++k) {
    double const single = fusekit::sum(
        fusekit::cpu{}, ::cuda::std::span<const double>(X.data() + (rows.offset + k) * L, static_cast<std::size_t>(L)));
    ASSERT_TRUE(same_bits(sums[static_cast<std::size_t>(k)], single)) << "row " << rows.offset + k;
  }
}

TEST(Mpi, NullCommunicatorAndBadOffsetsAreRejected) {
  std::vector<float> x(100, 1.0f);
  EXPECT_THROW((void)fusekit::sum(fusekit::mpi{MPI_COMM_NULL}, x), fusekit::invalid_argument);
  std::vector<double> X(6, 1.0), Y(3, 1.0), W(2, 0.0);
  EXPECT_THROW(
      (void)fusekit::fit(fusekit::mpi{MPI_COMM_NULL}, fusekit::matrix<const double>(X.data(), 3, 2),
                         fusekit::matrix<const double>(Y.data(), 3, 1), fusekit::matrix<double>(W.data(), 1, 2)),
      fusekit::invalid_argument);
  int const last = ranks_here() - 1;
  fusekit::mpi const world{MPI_COMM_WORLD};
  auto const message = [&](std::int64_t offset) {
    try {
      (void)fusekit::sum(world.at(rank_here() == last ? offset : 100 * rank_here()), x);
    } catch (const fusekit::invalid_argument& e) { return std::string(e.what()); }
    return std::string("no exception");
  };
  // −5 was taken as −1 (after the lower ranks).
  std::string const negative = message(-5);
  EXPECT_NE(negative.find("rank " + std::to_string(last) + "'s offset is -5"), std::string::npos) << negative;
  // Near INT64_MAX the shard's end overflowed (UB), and the message blamed another rank.
  std::string const huge = message(INT64_MAX - 10);
  EXPECT_NE(huge.find("rank " + std::to_string(last) + "'s shard of 100 values"), std::string::npos) << huge;
  EXPECT_EQ(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  if (rank_here() != 0) {  // one rank prints; every rank checks (mpirun fails if any rank fails)
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  int const failed = RUN_ALL_TESTS();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank_here() == 0) { std::printf("fusekit mpi test: %d ranks, %s\n", ranks_here(), any ? "FAILED" : "passed"); }
  MPI_Finalize();
  return any;
}
