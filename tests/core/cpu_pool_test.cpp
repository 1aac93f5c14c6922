// SPDX-License-Identifier: Apache-2.0
// The CPU backend's threads (detail/core/cpu_pool.hpp), from their contract:
// every chunk runs exactly once; a call never needs a helper (with every
// helper held back it finishes on the calling thread, with cpu{1}'s bits);
// results do not depend on the thread count or on which thread ran which
// chunk; calls nest (from a user's OpenMP region, from 8 std::threads, from
// inside a chunk, after fork) without a hang; the default count is settable.
#include <fusekit/fusekit.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <future>
#include <random>
#include <thread>
#include <vector>

#if FUSEKIT_HAS_OPENMP
#include <omp.h>
#endif
#if defined(__unix__)
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace {

using ::cuda::std::span;
using fusekit::detail::cpu_chunks;
using fusekit::detail::cpu_pool;
using fusekit::detail::cpu_split;

// Runs f on a thread of its own; fails and ends the process if it has not
// returned within `seconds` (a hang must not wait for ctest's timeout).
void within(int seconds, const std::function<void()>& f) {
  std::promise<void> finished;
  auto done = finished.get_future();
  std::thread([&f, p = std::move(finished)]() mutable {
    f();
    p.set_value();
  }).detach();
  if (done.wait_for(std::chrono::seconds(seconds)) != std::future_status::ready) {
    ADD_FAILURE() << "did not finish within " << seconds << " s";
    std::fflush(nullptr);
    std::_Exit(1);
  }
  done.get();
}

// f throws fusekit::invalid_argument whose message holds every needle.
template <class F>
void rejects(F f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "not rejected: " << needles[0];
  } catch (const fusekit::invalid_argument& e) {
    for (const auto& needle : needles) { EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what(); }
  }
}

TEST(CpuSplit, CoversTheRangeInNearEqualChunksThatDependOnTheSizeAlone) {
  for (std::int64_t count : {0LL, 1LL, 7LL, 4096LL, 4097LL, 100000LL, 12345679LL}) {
    for (std::int64_t grain : {1LL, 3LL, 1000LL, 16384LL}) {
      cpu_chunks const s = cpu_split(count, grain);
      ASSERT_GE(s.chunks, 1);
      EXPECT_EQ(s.begin(0), 0);
      EXPECT_EQ(s.end(s.chunks - 1), count);
      std::int64_t smallest = count, largest = 0;
      for (std::int64_t c = 0; c < s.chunks; ++c) {
        ASSERT_LE(s.begin(c), s.end(c));
        smallest = std::min(smallest, s.end(c) - s.begin(c));
        largest = std::max(largest, s.end(c) - s.begin(c));
      }
      EXPECT_LE(largest - smallest, 1) << count << "/" << grain;
      EXPECT_LE(largest, count == 0 ? 0 : grain) << count << "/" << grain;  // about `grain` items, never more
    }
  }
  // More chunks than a job word holds: as many as it holds, still covering everything.
  cpu_chunks const huge = cpu_split(std::int64_t{1} << 40, 1);
  EXPECT_EQ(huge.chunks, fusekit::detail::cpu_max_chunks);
  EXPECT_EQ(huge.end(huge.chunks - 1), std::int64_t{1} << 40);
}

TEST(CpuPool, RunsEveryChunkExactlyOnceForAnyHelperCount) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    std::int64_t const chunks = 1 + static_cast<std::int64_t>(rng() % 300);
    int const helpers = static_cast<int>(rng() % 6);
    std::vector<std::atomic<int>> runs(static_cast<std::size_t>(chunks));
    fusekit::detail::cpu_run_chunks(cpu_chunks{chunks, chunks}, helpers,
                                    [&](std::int64_t c, std::int64_t begin, std::int64_t end) {
                                      EXPECT_EQ(begin, c);
                                      EXPECT_EQ(end, c + 1);
                                      runs[static_cast<std::size_t>(c)].fetch_add(1);
                                    });
    for (std::int64_t c = 0; c < chunks; ++c) {
      ASSERT_EQ(runs[static_cast<std::size_t>(c)].load(), 1) << "chunk " << c << " of " << chunks;
    }
  }
}

TEST(CpuPool, MoreChunksThanAJobWordCountsAllRun) {
  std::int64_t const chunks = fusekit::detail::cpu_max_chunks + 3;
  std::vector<unsigned char> runs(static_cast<std::size_t>(chunks), 0);
  fusekit::detail::cpu_run_chunks(cpu_chunks{chunks, chunks}, 2, [&](std::int64_t c, std::int64_t, std::int64_t) {
    ++runs[static_cast<std::size_t>(c)];
  });
  EXPECT_EQ(std::count(runs.begin(), runs.end(), 1), chunks);
}

// Every CPU entry point, once, writing what it computes into `bits`.
struct results {
  std::vector<float> layer, out;
  float tree = 0, parallel = 0, block = 0, max = 0, tr = 0;
  std::uint64_t bytes = 0;
  double dtree = 0;
  std::vector<double> W, Y_hat, W_plain;
  bool operator==(const results& o) const {
    auto const same = [](const auto& a, const auto& b) {
      return sizeof(a) == sizeof(b) && std::memcmp(&a, &b, sizeof(a)) == 0;
    };
    return layer == o.layer && out == o.out && same(tree, o.tree) && same(parallel, o.parallel) && same(max, o.max) &&
           same(tr, o.tr) && bytes == o.bytes && same(dtree, o.dtree) && W == o.W && Y_hat == o.Y_hat &&
           W_plain == o.W_plain;
  }
};

struct inputs {
  std::vector<unsigned char> grey;
  std::vector<float> w, x;
  std::vector<double> X, Y;
  std::int64_t K = 3000, L = 40, N = 3;
  explicit inputs(std::int64_t n) : grey(n), w(n), x(n), X(3000 * 40), Y(3000 * 3) {
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::int64_t i = 0; i < n; ++i) {
      grey[i] = static_cast<unsigned char>(rng() & 0xff);
      w[i] = u(rng);
      x[i] = u(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 20) - 10);  // cancelling, wide-ranging
    }
    std::normal_distribution<double> g(0.0, 1.0);
    for (double& v : X) { v = g(rng); }
    for (double& v : Y) { v = g(rng); }
  }
};

results run_all(const fusekit::cpu& p, const inputs& in) {
  results r;
  std::int64_t const n = static_cast<std::int64_t>(in.x.size());
  r.layer.resize(n);
  r.out.resize(n);
  fusekit::hidden_layer(p, in.grey, in.w, r.layer);
  fusekit::transform(p, r.out, fusekit::weigh{}, in.x, in.w);
  r.tree = fusekit::sum(p, in.x);
  r.parallel = fusekit::sum(p, in.x, fusekit::reduce_algorithm::run_to_run);
  r.dtree = fusekit::sum(p, in.x, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<double>{});
  r.bytes = fusekit::sum(p, in.grey, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<std::uint64_t>{});
  fusekit::reduce(p, in.x, &r.max, fusekit::maximum{}, -1e30f);
  r.tr = fusekit::transform_reduce(p, fusekit::weigh{}, in.x, in.w);
  fusekit::matrix<const double> X(in.X.data(), in.K, in.L), Y(in.Y.data(), in.K, in.N);
  r.W.assign(in.N * in.L, 0.0);
  fusekit::fit(p, X, Y, fusekit::matrix<double>(r.W.data(), in.N, in.L), fusekit::gd_options::recommended());
  fusekit::gd_options plain;  // the seed's loop: many iterations over every output
  plain.max_iterations = 50;
  r.W_plain.assign(in.N * in.L, 0.0);
  fusekit::fit(p, X, Y, fusekit::matrix<double>(r.W_plain.data(), in.N, in.L), plain);
  r.Y_hat.assign(in.K * in.N, 0.0);
  fusekit::predict(p, X, fusekit::matrix<const double>(r.W.data(), in.N, in.L),
                   fusekit::matrix<double>(r.Y_hat.data(), in.K, in.N));
  return r;
}

// Sizes past every loop's helper threshold (tuning.hpp, cpu_thread_tuning).
constexpr std::int64_t large = (std::int64_t{1} << 20) + 12345;

struct held_helpers {
  held_helpers() { cpu_pool::instance().hold_helpers(true); }
  ~held_helpers() { cpu_pool::instance().hold_helpers(false); }
};

TEST(CpuPool, EveryEntryPointFinishesOnTheCallerAloneWithOneThreadsBits) {
  inputs const in(large);
  results const one = run_all(fusekit::cpu{1}, in);
  (void)run_all(fusekit::cpu{4}, in);  // the pool exists, its helpers started
  ASSERT_GE(cpu_pool::instance().helpers_started(), 1);
  held_helpers const hold;
  std::int64_t const before = cpu_pool::instance().helper_chunks();
  within(120, [&] {
    results const alone = run_all(fusekit::cpu{4}, in);
    EXPECT_TRUE(alone == one);
  });
  EXPECT_EQ(cpu_pool::instance().helper_chunks(), before) << "a held helper ran a chunk";
}

std::int64_t reversed(std::int64_t claimed, std::int64_t chunks) { return chunks - 1 - claimed; }
std::int64_t strided(std::int64_t claimed, std::int64_t chunks) {
  // claimed ↦ (claimed · k) mod chunks with k coprime to chunks: a permutation
  // (chunks < 2^24 and k < 2^14 here: the product fits).
  std::int64_t k = 7919;
  while (std::gcd(k, chunks) != 1) { ++k; }
  return claimed * k % chunks;
}

TEST(CpuPool, BitsDoNotDependOnTheThreadCountOrOnWhichThreadRunsAChunk) {
  inputs const in(large);
  results const one = run_all(fusekit::cpu{1}, in);
  for (int threads : {2, 3, 4}) { EXPECT_TRUE(run_all(fusekit::cpu{threads}, in) == one) << threads << " threads"; }
  for (auto order : {&reversed, &strided}) {
    cpu_pool::instance().set_claim_order(order);
    for (int threads : {2, 4}) {
      EXPECT_TRUE(run_all(fusekit::cpu{threads}, in) == one) << threads << " threads, another chunk order";
    }
    cpu_pool::instance().set_claim_order(nullptr);
  }
}

TEST(CpuPool, CallsFromEightThreadsAtOnceGiveTheSerialBits) {
  inputs const in(large);
  results const one = run_all(fusekit::cpu{1}, in);
  within(300, [&] {
    std::vector<std::thread> users;
    std::atomic<int> same{0};
    for (int t = 0; t < 8; ++t) {
      users.emplace_back([&] { same += run_all(fusekit::cpu{}, in) == one ? 1 : 0; });
    }
    for (auto& u : users) { u.join(); }
    EXPECT_EQ(same.load(), 8);
  });
}

TEST(CpuPool, CallsFromAUsersOpenMpRegionGiveTheSerialBits) {
#if !FUSEKIT_HAS_OPENMP
  GTEST_SKIP() << "built without OpenMP";
#elif defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "libgomp is not built for ThreadSanitizer, which would report its own synchronization";
#else
  inputs const in(large);
  results const one = run_all(fusekit::cpu{1}, in);
  within(300, [&] {
    int same = 0;
#pragma omp parallel num_threads(4) reduction(+ : same)
    { same += run_all(fusekit::cpu{4}, in) == one ? 1 : 0; }
    EXPECT_EQ(same, 4);
  });
#endif
}

TEST(CpuPool, ACallFromInsideAChunkRunsOnItsThread) {
  inputs const in(large);
  float const expected = fusekit::sum(fusekit::cpu{1}, in.x);
  std::vector<float> got(16, 0.0f);
  within(120, [&] {
    fusekit::detail::cpu_run_chunks(cpu_chunks{16, 16}, 3, [&](std::int64_t c, std::int64_t, std::int64_t) {
      got[static_cast<std::size_t>(c)] = fusekit::sum(fusekit::cpu{4}, in.x);
    });
  });
  for (float g : got) { EXPECT_EQ(g, expected); }
}

TEST(CpuPool, AChildProcessAfterForkFinishesItsCalls) {
#if !defined(__unix__)
  GTEST_SKIP() << "no fork() here";
#elif defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer cannot start threads in a child of a threaded process";
#else
  inputs const in(large);
  float const expected = fusekit::sum(fusekit::cpu{1}, in.x);
  ASSERT_EQ(fusekit::sum(fusekit::cpu{2}, in.x), expected);  // the parent's helpers exist
  pid_t const child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    alarm(60);  // a hang ends the child, and the parent sees a failure
    bool ok = true;
    for (int i = 0; i < 20; ++i) { ok = ok && fusekit::sum(fusekit::cpu{2}, in.x) == expected; }
    std::_Exit(ok ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child did not exit (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

TEST(CpuThreads, TheDefaultCountIsSettableAndChecked) {
  int const initial = fusekit::default_threads();
  EXPECT_GE(initial, 1);
  fusekit::set_default_threads(3);
  EXPECT_EQ(fusekit::default_threads(), 3);
  EXPECT_EQ(fusekit::detail::cpu_thread_count(fusekit::cpu{}), 3);
  EXPECT_EQ(fusekit::detail::cpu_thread_count(fusekit::cpu{2}), 2);  // an explicit count is the caller's
  fusekit::set_default_threads(0);
  EXPECT_EQ(fusekit::default_threads(), initial);
  rejects([] { fusekit::set_default_threads(-1); }, {"fusekit::set_default_threads", "threads is -1"});
  EXPECT_EQ(fusekit::default_threads(), initial);
  // Up to 4 threads per processor, as documented (policy.hpp).
  int const processors = fusekit::detail::cpu_processors();
  EXPECT_EQ(fusekit::detail::cpu_thread_count(fusekit::cpu{4 * processors}), 4 * processors);
  EXPECT_EQ(fusekit::detail::cpu_thread_count(fusekit::cpu{4 * processors + 1}), 4 * processors);
}

TEST(CpuThreads, ANegativeCountIsRejectedByEveryEntryPointBeforeAnythingIsWritten) {
  std::vector<double> X(4 * 2, 1.0), Y(4, 1.0), W(2, 7.0), Y_hat(4, 7.0);
  X[1] = 2.0;
  fusekit::matrix<const double> Xv(X.data(), 4, 2), Yv(Y.data(), 4, 1);
  for (auto o : {fusekit::gd_options::recommended(), fusekit::gd_options{}}) {
    rejects([&] { fusekit::fit(fusekit::cpu{-1}, Xv, Yv, fusekit::matrix<double>(W.data(), 1, 2), o); },
            {"fusekit::cpu", "threads is -1"});
  }
  EXPECT_EQ(W, std::vector<double>(2, 7.0));
  rejects(
      [&] {
        fusekit::predict(fusekit::cpu{-1}, Xv, fusekit::matrix<const double>(W.data(), 1, 2),
                         fusekit::matrix<double>(Y_hat.data(), 4, 1));
      },
      {"fusekit::cpu", "threads is -1"});
  EXPECT_EQ(Y_hat, std::vector<double>(4, 7.0));
  std::vector<float> x(10, 1.0f);
  rejects([&] { (void)fusekit::sum(fusekit::cpu{-2}, x); }, {"fusekit::cpu", "threads is -2"});
}

}  // namespace
