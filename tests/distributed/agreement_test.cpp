// SPDX-License-Identifier: Apache-2.0
// The agreement every distributed call makes first, and the fold of the ranks'
// partial sums (detail/distributed/agreement.hpp): the code fusekit::mpi and
// fusekit::nccl both run, driven here by a communicator of threads
// (tests/common/fake_communicator.hpp), where NCCL cannot run. The contract:
// any value of the call key that differs makes every rank throw, naming the
// first differing rank and the value; a failing check makes every rank throw
// the lowest failing rank's message; a progress callback that throws on one
// rank stops every rank at that call; partial sums fold in rank order with the
// op, the same bits on every rank.
#include <fusekit/detail/distributed/agreement.hpp>
#include <fusekit/detail/train/conjugate_gradient.hpp>
#include <fusekit/detail/train/prepare.hpp>

#include "../common/fake_communicator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using fusekit::gd_options;
using fusekit::detail::call_key;
using fusekit::test::fake_communicator;
using fusekit::test::run_ranks;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every rank's verdict when rank r calls agree() with key_of(r) and checks_of(r).
template <class KeyOf, class ChecksOf>
std::vector<std::string> agree_on(int ranks, const KeyOf& key_of, const ChecksOf& checks_of) {
  return run_ranks(ranks, [&](int r, fake_communicator& comm) {
    fusekit::detail::agree("fusekit::nccl", comm.gather_of(r), key_of(r), checks_of(r));
  });
}
auto const no_checks = [](int) { return [] {}; };

TEST(Agreement, RanksThatAgreeAllPassAndGatherOnce) {
  for (int ranks : {1, 2, 3, 8}) {
    fake_communicator comm(ranks);
    std::vector<std::thread> threads;
    std::vector<int> passed(static_cast<std::size_t>(ranks), 0);
    for (int r = 0; r < ranks; ++r) {
      threads.emplace_back([&, r] {
        fusekit::detail::agree(
            "fusekit::nccl", comm.gather_of(r),
            fusekit::detail::sum_key<float, double>("fusekit::sum", fusekit::reduce_algorithm::deterministic), [] {});
        passed[static_cast<std::size_t>(r)] = 1;
      });
    }
    for (auto& t : threads) { t.join(); }
    EXPECT_EQ(std::vector<int>(static_cast<std::size_t>(ranks), 1), passed) << ranks;
    EXPECT_EQ(comm.calls(), ranks) << "one gather per rank";
  }
}

// Each option of gd_options perturbed on one rank: every rank throws, naming
// that rank and that option (for_each_option's name), whichever rank differs.
TEST(Agreement, EveryOptionThatDiffersOnOneRankIsNamedOnEveryRank) {
  std::vector<std::pair<std::string, std::function<void(gd_options&)>>> const fields = {
      {"learning_rate", [](gd_options& o) { o.learning_rate = 0.25; }},
      {"tolerance", [](gd_options& o) { o.tolerance = 1e-3; }},
      {"relative_tolerance", [](gd_options& o) { o.relative_tolerance = 1e-4; }},
      {"max_iterations", [](gd_options& o) { o.max_iterations += 1; }},
      {"init", [](gd_options& o) { o.init = fusekit::gd_init::uniform; }},
      {"seed", [](gd_options& o) { o.seed += 1; }},
      {"method", [](gd_options& o) { o.method = fusekit::gd_method::conjugate_gradient; }},
      {"formulation", [](gd_options& o) { o.formulation = fusekit::gd_formulation::direct; }},
      {"preconditioner", [](gd_options& o) { o.preconditioner = fusekit::gd_preconditioner::cholesky; }},
      {"stall_window", [](gd_options& o) { o.stall_window += 1; }},
      {"progress (set or not)", [](gd_options& o) { o.progress = [](const fusekit::fit_progress&) {}; }},
      {"progress_every", [](gd_options& o) { o.progress_every += 1; }},
      {"refinement_steps", [](gd_options& o) { o.refinement_steps += 1; }},
      {"ridge", [](gd_options& o) { o.ridge = 0.5; }},
      {"fit_intercept", [](gd_options& o) { o.fit_intercept = !o.fit_intercept; }},
  };
  std::mt19937 rng(5);
  for (const auto& [name, change] : fields) {
    int const ranks = 2 + static_cast<int>(rng() % 4);
    int const odd = 1 + static_cast<int>(rng() % static_cast<unsigned>(ranks - 1));
    auto const what = agree_on(
        ranks,
        [&](int r) {
          gd_options o;
          if (r == odd) { change(o); }
          return fusekit::detail::fit_key<double>("fusekit::fit", 7, 3, o, 0);
        },
        no_checks);
    for (int r = 0; r < ranks; ++r) {
      const std::string& w = what[static_cast<std::size_t>(r)];
      EXPECT_TRUE(
          has(w, "invalid_argument: fusekit::nccl: rank " + std::to_string(odd) + " passes a different " + name))
          << name << ", rank " << r << ": " << w;
    }
  }
}

TEST(Agreement, TypesShapesAndTheWarmStartMustAgree) {
  using fusekit::reduce_algorithm;
  struct variant {
    std::string named;
    std::function<call_key(int)> key_of;
  };
  std::vector<double> const w0 = {1.0, 2.0, 3.0}, w1 = {1.0, 2.0, 3.0000000000000004};
  gd_options warm;
  warm.init = fusekit::gd_init::warm_start;
  std::vector<variant> const variants = {
      {"accumulator type",
       [](int r) {
         return r == 2 ? fusekit::detail::sum_key<float, float>("fusekit::sum", reduce_algorithm::run_to_run)
                       : fusekit::detail::sum_key<float, double>("fusekit::sum", reduce_algorithm::run_to_run);
       }},
      {"element type",
       [](int r) {
         return r == 2 ? fusekit::detail::sum_key<double, double>("fusekit::sum", reduce_algorithm::run_to_run)
                       : fusekit::detail::sum_key<float, double>("fusekit::sum", reduce_algorithm::run_to_run);
       }},
      {"algorithm",
       [](int r) {
         return fusekit::detail::sum_key<float, double>(
             "fusekit::sum", r == 2 ? reduce_algorithm::block_atomic : reduce_algorithm::run_to_run);
       }},
      {"function called or its types",
       [](int r) {
         return fusekit::detail::sum_key<float, double>(r == 2 ? "fusekit::reduce_sum" : "fusekit::sum",
                                                        reduce_algorithm::run_to_run);
       }},
      {"L (columns of X)",
       [](int r) { return fusekit::detail::fit_key<float>("fusekit::fit", r == 2 ? 8 : 7, 3, gd_options{}, 0); }},
      {"N (columns of Y)",
       [](int r) { return fusekit::detail::fit_key<float>("fusekit::fit", 7, r == 2 ? 2 : 3, gd_options{}, 0); }},
      {"W (the warm start)",
       [&](int r) {
         const std::vector<double>& w = r == 2 ? w1 : w0;
         return fusekit::detail::fit_key<double>("fusekit::fit", 3, 1, warm, fusekit::detail::bytes_hash(w.data(), 3));
       }},
  };
  for (const auto& v : variants) {
    auto const what = agree_on(4, v.key_of, no_checks);
    for (int r = 0; r < 4; ++r) {
      EXPECT_TRUE(has(what[static_cast<std::size_t>(r)], "rank 2 passes a different " + v.named))
          << v.named << ", rank " << r << ": " << what[static_cast<std::size_t>(r)];
    }
  }
  // A start that is not a warm start does not take part: different W, same call.
  auto const cold = agree_on(
      3,
      [&](int r) {
        const std::vector<double>& w = r == 2 ? w1 : w0;
        return fusekit::detail::fit_key<double>("fusekit::fit", 3, 1, gd_options{},
                                                fusekit::detail::bytes_hash(w.data(), 3));
      },
      no_checks);
  EXPECT_EQ(cold, std::vector<std::string>(3, ""));
}

TEST(Agreement, TheLowestFailingRanksMessageOnEveryRank) {
  for (int ranks : {2, 4, 7}) {
    auto const what = agree_on(
        ranks,
        [](int) {
          return fusekit::detail::sum_key<float, double>("fusekit::sum", fusekit::reduce_algorithm::run_to_run);
        },
        [&](int r) {
          return [r, ranks] {
            if (r == ranks - 1 || r == ranks / 2) {
              throw fusekit::invalid_argument("fusekit::sum: in has a NaN at " + std::to_string(r));
            }
          };
        });
    int const first = ranks / 2;
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(what[static_cast<std::size_t>(r)], "invalid_argument: fusekit::sum: in has a NaN at " +
                                                       std::to_string(first) + " (rank " + std::to_string(first) + ")")
          << ranks << " ranks, rank " << r;
    }
  }
  // A message longer than the row keeps its first 479 bytes and the rank.
  std::string const long_text(2000, 'x');
  auto const what = agree_on(
      3, [](int) { return call_key("fusekit::sum"); },
      [&](int r) {
        return [r, &long_text] {
          if (r == 1) { throw fusekit::invalid_argument(long_text); }
        };
      });
  for (const auto& w : what) {
    EXPECT_EQ(w, "invalid_argument: " + std::string(fusekit::detail::agreement_message_bytes - 1, 'x') + " (rank 1)");
  }
}

// A differing key wins over a failing check: ranks may not even agree on what the checks mean.
TEST(Agreement, ADifferentCallIsReportedBeforeAFailingCheck) {
  auto const what = agree_on(
      3,
      [](int r) {
        return fusekit::detail::sum_key<float, double>(
            "fusekit::sum", r == 1 ? fusekit::reduce_algorithm::run_to_run : fusekit::reduce_algorithm::deterministic);
      },
      [](int r) {
        return [r] {
          if (r == 0) { throw fusekit::invalid_argument("fusekit::sum: a check"); }
        };
      });
  for (const auto& w : what) { EXPECT_TRUE(has(w, "rank 1 passes a different algorithm")) << w; }
}

struct callback_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

TEST(Agreement, AProgressCallbackThatThrowsOnOneRankStopsEveryRankThere) {
  int const ranks = 5, thrower = 3, at_call = 4;
  std::vector<int> calls(ranks, 0);
  auto const what = run_ranks(ranks, [&](int r, fake_communicator& comm) {
    gd_options o;
    o.progress = [&, r](const fusekit::fit_progress&) {
      if (++calls[static_cast<std::size_t>(r)] == at_call && r == thrower) { throw callback_error("stop here"); }
    };
    auto const collective = fusekit::detail::collective_progress("fusekit::fit (nccl)", o, comm.gather_of(r));
    ASSERT_TRUE(static_cast<bool>(collective));
    for (std::int64_t it = 1; it <= 10; ++it) {  // a fit calls it every progress_every iterations
      fusekit::fit_progress now;
      now.iteration = it * 100;
      collective(now);
    }
  });
  for (int r = 0; r < ranks; ++r) {
    EXPECT_EQ(calls[static_cast<std::size_t>(r)], at_call) << "rank " << r << " went on past the stop";
    if (r == thrower) {
      EXPECT_EQ(what[static_cast<std::size_t>(r)], "runtime_error: stop here");
    } else {
      EXPECT_EQ(what[static_cast<std::size_t>(r)],
                "runtime_error: fusekit::fit (nccl): the progress callback threw on rank 3 at iteration 400; every "
                "rank stops there");
    }
  }
  gd_options unset;
  fake_communicator one(1);
  EXPECT_FALSE(static_cast<bool>(fusekit::detail::collective_progress("f", unset, one.gather_of(0))));
}

// The ranks' partial results, folded with the op in rank order, skipping empty
// shards: against the same fold written out, bit for bit, on every rank; an
// op that is not commutative shows the order.
TEST(Agreement, PartialResultsFoldInRankOrderWithTheOp) {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 50; ++trial) {
    int const ranks = 1 + static_cast<int>(rng() % 8);
    std::vector<double> part(static_cast<std::size_t>(ranks));
    std::vector<std::int64_t> size(static_cast<std::size_t>(ranks));
    std::uniform_real_distribution<double> u(-1e6, 1e6);
    for (int r = 0; r < ranks; ++r) {
      part[static_cast<std::size_t>(r)] = u(rng) * std::pow(10.0, static_cast<double>(rng() % 20) - 10);
      size[static_cast<std::size_t>(r)] = rng() % 4 == 0 ? 0 : static_cast<std::int64_t>(rng() % 1000 + 1);
    }
    double const init = trial % 3 == 0 ? 0.5 : 0.0;
    double expected = init;
    for (int r = 0; r < ranks; ++r) {
      if (size[static_cast<std::size_t>(r)] > 0) { expected = expected + part[static_cast<std::size_t>(r)]; }
    }
    std::int64_t expected_order = 7;
    for (int r = 0; r < ranks; ++r) {
      if (size[static_cast<std::size_t>(r)] > 0) { expected_order = expected_order * 3 + r + 1; }
    }
    std::vector<double> got(static_cast<std::size_t>(ranks));
    std::vector<std::int64_t> order(static_cast<std::size_t>(ranks));
    auto const what = run_ranks(ranks, [&](int r, fake_communicator& comm) {
      auto const i = static_cast<std::size_t>(r);
      got[i] = fusekit::detail::fold_in_rank_order(
          comm.gather_of(r), part[i], size[i], [](double a, double b) { return a + b; }, init);
      order[i] = fusekit::detail::fold_in_rank_order(
          comm.gather_of(r), std::int64_t{r + 1}, size[i], [](std::int64_t a, std::int64_t b) { return a * 3 + b; },
          std::int64_t{7});
    });
    for (int r = 0; r < ranks; ++r) {
      auto const i = static_cast<std::size_t>(r);
      EXPECT_EQ(what[i], "");
      EXPECT_EQ(std::memcmp(&got[i], &expected, sizeof expected), 0) << trial << ", rank " << r;
      EXPECT_EQ(order[i], expected_order) << trial << ", rank " << r;
    }
  }
  // float partials travel in 8-byte slots: their bits come back whole.
  auto const what = run_ranks(3, [](int r, fake_communicator& comm) {
    float const mine[3] = {1.0f / 3.0f, -0.0f, 1e-40f};
    float const all = fusekit::detail::fold_in_rank_order(
        comm.gather_of(r), mine[r], std::int64_t{1}, [](float a, float b) { return a + b; }, 0.0f);
    float const expected = (0.0f + 1.0f / 3.0f) + -0.0f + 1e-40f;
    if (std::memcmp(&all, &expected, sizeof all) != 0) { throw std::runtime_error("float bits differ"); }
  });
  EXPECT_EQ(what, std::vector<std::string>(3, ""));
}

// fusekit::nccl's reduction for the algorithms other than the tree
// (shards_in_rank_order): each rank reduces its shard, starting from the op's
// identity (fusekit::plus) or, for an op without one, from its first value
// over the rest; then the ranks' results fold in rank order. init is applied
// once: a caller's plus with init 5 (no identity known) gives 5 + Σ, never
// 5·ranks + Σ. Empty shards, and every rank empty, included.
struct caller_plus {  // associative and commutative, but not fusekit::plus: no identity is known
  std::int64_t operator()(std::int64_t a, std::int64_t b) const { return a + b; }
};

template <class Op>
void shards_fold_once(const Op& op, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 40; ++trial) {
    int const ranks = 1 + static_cast<int>(rng() % 6);
    std::vector<std::vector<std::int64_t>> shard(static_cast<std::size_t>(ranks));
    std::int64_t total = 0;
    for (auto& s : shard) {
      s.resize(trial == 0 || rng() % 4 == 0 ? 0 : rng() % 50 + 1);
      for (auto& v : s) { total += v = static_cast<std::int64_t>(rng() % 2001) - 1000; }
    }
    std::int64_t const init = 5;
    std::vector<std::int64_t> got(static_cast<std::size_t>(ranks));
    std::vector<std::int64_t> starts(static_cast<std::size_t>(ranks), -99999);
    auto const what = run_ranks(ranks, [&](int r, fake_communicator& comm) {
      auto const i = static_cast<std::size_t>(r);
      using src_t = fusekit::detail::array_source<std::int64_t, std::int64_t>;
      got[i] = fusekit::detail::shards_in_rank_order(
          comm.gather_of(r), src_t{shard[i].data()}, static_cast<std::int64_t>(shard[i].size()), op, init,
          [&](const src_t& from, std::int64_t n, std::int64_t start) {
            starts[i] = start;
            for (std::int64_t k = 0; k < n; ++k) { start = op(start, from(k)); }
            return start;
          },
          [](const src_t& from) { return from(0); });
    });
    for (int r = 0; r < ranks; ++r) {
      auto const i = static_cast<std::size_t>(r);
      EXPECT_EQ(what[i], "");
      EXPECT_EQ(got[i], init + total) << "trial " << trial << ", rank " << r;
      if (!shard[i].empty()) {  // the identity 0, or the shard's first value
        std::int64_t const start = std::is_same_v<Op, fusekit::plus> ? 0 : shard[i][0];
        EXPECT_EQ(starts[i], start) << "trial " << trial;
      }
    }
  }
}

TEST(Agreement, ShardsApplyInitOnceWithOrWithoutAnIdentity) {
  shards_fold_once(fusekit::plus{}, 21);
  shards_fold_once(caller_plus{}, 22);
}

// ---- A fit's extras across ranks (fusekit::nccl and fusekit::mpi) ----

// Whether weights are given, and intercepts, must agree; a rank without rows
// gives no weights and joins the others' answer.
TEST(Agreement, ExtrasAgreeAndARankWithoutRowsJoinsAWeightedFit) {
  // mine: 1 weights given, 0 not, -1 a shard without rows
  auto const verdicts = [](const std::vector<int>& mine, const std::vector<bool>& intercept) {
    std::vector<int> weighted(mine.size(), -7);
    auto const what = run_ranks(static_cast<int>(mine.size()), [&](int r, fake_communicator& comm) {
      auto const i = static_cast<std::size_t>(r);
      bool const w = fusekit::detail::agreed_weighting(comm.gather_of(r), mine[i]);
      weighted[i] = w ? 1 : 0;
      call_key key = fusekit::detail::fit_key<double>("fusekit::fit", 4, 2, gd_options{}, 0);
      fusekit::detail::agree("fusekit::nccl", comm.gather_of(r), fusekit::detail::with_extras(key, w, intercept[i]),
                             [] {});
    });
    return std::make_pair(weighted, what);
  };
  auto const [joined, joined_what] = verdicts({1, -1, 1}, {true, true, true});
  EXPECT_EQ(joined, (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(joined_what, (std::vector<std::string>{"", "", ""}));
  auto const [none, none_what] = verdicts({0, -1, 0}, {false, false, false});
  EXPECT_EQ(none, (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(none_what, (std::vector<std::string>{"", "", ""}));
  auto const [split, split_what] = verdicts({1, 0, 1}, {true, true, true});
  for (const std::string& w : split_what) { EXPECT_TRUE(has(w, "rank 1") && has(w, "sample weights")) << w; }
  auto const [bias, bias_what] = verdicts({0, 0, 0}, {true, true, false});
  for (const std::string& w : bias_what) { EXPECT_TRUE(has(w, "rank 2") && has(w, "intercept (given or not)")) << w; }
}

// The preparation's sums and maxima over the ranks: rank 0's value first,
// then each rank's in order, the same bits on every rank (-0 and ±inf kept).
TEST(Agreement, DoublesCombineInRankOrderWithTheSameBitsOnEveryRank) {
  std::mt19937_64 rng(8);
  std::normal_distribution<double> normal;
  for (int ranks : {1, 2, 5}) {
    std::vector<std::vector<double>> part(static_cast<std::size_t>(ranks), std::vector<double>(6));
    for (auto& v : part) {
      for (double& x : v) { x = normal(rng) * std::ldexp(1.0, static_cast<int>(rng() % 120) - 60); }
      v[4] = -0.0;
      v[5] = -HUGE_VAL;
    }
    std::vector<double> sum(6), max(6);
    for (std::size_t i = 0; i < 6; ++i) {
      sum[i] = part[0][i];
      max[i] = part[0][i];
      for (std::size_t r = 1; r < part.size(); ++r) {
        sum[i] = sum[i] + part[r][i];
        max[i] = part[r][i] > max[i] ? part[r][i] : max[i];
      }
    }
    std::vector<std::vector<double>> got_sum(part), got_max(part);
    auto const what = run_ranks(ranks, [&](int r, fake_communicator& comm) {
      auto const i = static_cast<std::size_t>(r);
      fusekit::detail::doubles_in_rank_order(comm.gather_of(r), got_sum[i].data(), 6,
                                             [](double a, double b) { return a + b; });
      fusekit::detail::doubles_in_rank_order(comm.gather_of(r), got_max[i].data(), 6,
                                             [](double a, double b) { return a > b ? a : b; });
    });
    for (int r = 0; r < ranks; ++r) {
      auto const i = static_cast<std::size_t>(r);
      EXPECT_EQ(what[i], "");
      EXPECT_EQ(0, std::memcmp(got_sum[i].data(), sum.data(), 6 * sizeof(double))) << ranks << " ranks, rank " << r;
      EXPECT_EQ(0, std::memcmp(got_max[i].data(), max.data(), 6 * sizeof(double))) << ranks << " ranks, rank " << r;
    }
  }
}

// The preparation of a weighted ridge fit with intercepts over shards of the
// rows, one of them empty, with the sums and maxima over the ranks as
// fusekit::nccl takes them: every rank holds the same means and exponents,
// rank 0 alone the ridge's rows, and the rows together are the single
// process's prepared rows within the rounding of the sums' order.
TEST(Agreement, ThePreparationOverRanksIsTheSingleProcessOne) {
  namespace d = fusekit::detail;
  std::mt19937_64 rng(12);
  std::normal_distribution<double> normal;
  std::int64_t const K = 40, L = 3, N = 2;
  std::vector<double> X(static_cast<std::size_t>(K * L)), Y(static_cast<std::size_t>(K * N)), s(K);
  for (std::int64_t k = 0; k < K; ++k) {
    for (std::int64_t l = 0; l < L; ++l) { X[k * L + l] = 100.0 * static_cast<double>(l) + normal(rng); }
    X[k * L + 2] *= 1e-250;  // a column in extreme units
    for (std::int64_t n = 0; n < N; ++n) { Y[k * N + n] = 5.0 + normal(rng); }
    s[k] = static_cast<double>(k % 3);
  }
  gd_options o;
  o.fit_intercept = true;
  o.ridge = 0.5;
  o.preconditioner = fusekit::gd_preconditioner::jacobi;
  auto const prepared = [&](std::int64_t first, std::int64_t rows, bool ridge_rows, const auto& sum, const auto& max) {
    fusekit::matrix<const double> const x(X.data() + first * L, rows, L), y(Y.data() + first * N, rows, N);
    fusekit::fit_extras<double> const e{::cuda::std::span<const double>(s.data() + first, rows), {}};
    std::vector<double> high, low, y_largest;
    (void)d::column_exponents(x, y, o, max, high, low, y_largest);
    return d::prepare(x, y, e, true, o, high, low, y_largest, ridge_rows, sum, max);  // weighted on every rank
  };
  d::prepared_data const one = prepared(0, K, true, d::no_processes{}, d::no_processes{});
  std::int64_t const first[4] = {0, 15, 15, 31}, rows[4] = {15, 0, 16, 9};  // rank 1 has no rows
  std::vector<d::prepared_data> got(4);
  auto const what = run_ranks(4, [&](int r, fake_communicator& comm) {
    auto const gather = comm.gather_of(r);
    auto const sum = [&](double* v, std::int64_t n) {
      d::doubles_in_rank_order(gather, v, n, [](double a, double b) { return a + b; });
    };
    auto const max = [&](double* v, std::int64_t n) {
      d::doubles_in_rank_order(gather, v, n, [](double a, double b) { return a > b ? a : b; });
    };
    got[static_cast<std::size_t>(r)] = prepared(first[r], rows[r], r == 0, sum, max);
  });
  std::vector<double> rows_x;  // the ranks' data rows in order, then rank 0's ridge rows
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(what[static_cast<std::size_t>(r)], "");
    const d::prepared_data& g = got[static_cast<std::size_t>(r)];
    EXPECT_EQ(g.rows, rows[r] + (r == 0 ? L : 0)) << "rank " << r;
    EXPECT_EQ(0, std::memcmp(g.x_mean.data(), got[0].x_mean.data(), L * sizeof(double))) << "rank " << r;
    EXPECT_EQ(0, std::memcmp(g.y_mean.data(), got[0].y_mean.data(), N * sizeof(double))) << "rank " << r;
    EXPECT_EQ(g.exponent, one.exponent) << "rank " << r;
    EXPECT_EQ(g.output_exponent, one.output_exponent) << "rank " << r;
    rows_x.insert(rows_x.end(), g.X.begin(), g.X.begin() + rows[r] * L);
  }
  rows_x.insert(rows_x.end(), got[0].X.begin() + rows[0] * L, got[0].X.end());
  ASSERT_EQ(rows_x.size(), one.X.size());
  for (std::size_t i = 0; i < rows_x.size(); ++i) {
    EXPECT_LE(std::fabs(rows_x[i] - one.X[i]), 1e-12 * (1 + std::fabs(one.X[i]))) << i;
  }
  for (std::int64_t l = 0; l < L; ++l) {
    EXPECT_LE(std::fabs(got[0].x_mean[l] - one.x_mean[l]), 1e-13 * std::fabs(one.x_mean[l]) + 1e-300) << l;
  }
}

}  // namespace
