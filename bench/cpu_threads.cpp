// SPDX-License-Identifier: Apache-2.0
// cpu{} against cpu{1}, call by call, in alternating rounds of one run: what
// the CPU backend's threads buy on a quiet machine and what they cost on a
// busy one (bench/contention.py runs it both ways, with two busy processes
// beside it the second time). Prints one CSV row per call and size:
//
//   call,n,threads,median_ms_all,median_ms_one,ratio,spread_all,spread_one
//
// ratio = cpu{} ÷ cpu{1} (below 1: the threads help); spread = (max − min) ÷ median.
//
//   cpu_threads_bench [--sizes 10000,100000,1000000,10000000] [--rounds 15] [--calls a,b,...] [--help]

#include <fusekit/fusekit.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 == 1 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

double spread(const std::vector<double>& v) {
  auto const [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) / median(v);
}

// A call of the CPU backend with a policy, over data made once.
using call_fn = std::function<void(const fusekit::cpu&)>;

struct data {
  std::vector<unsigned char> grey;
  std::vector<float> w, out, x;
  explicit data(std::int64_t n) : grey(n), w(n), out(n), x(n) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (std::int64_t i = 0; i < n; ++i) {
      grey[i] = static_cast<unsigned char>(rng() & 0xff);
      w[i] = u(rng);
      x[i] = u(rng);
    }
  }
};

volatile double sink = 0;

// A fit of Y ≈ X Wᵀ: K rows of L = 100 features, N = 10 outputs (K·L = n).
struct fit_data {
  std::int64_t K, L = 100, N = 10;
  std::vector<double> X, Y, W, Y_hat;
  explicit fit_data(std::int64_t n) : K(std::max<std::int64_t>(n / 100, 1)) {
    X.resize(K * L);
    Y.resize(K * N);
    W.resize(N * L);
    Y_hat.resize(K * N);
    std::mt19937 rng(11);
    std::normal_distribution<double> g(0.0, 1.0);
    for (double& v : X) { v = g(rng); }
    for (double& v : Y) { v = g(rng); }
  }
};

std::vector<std::int64_t> parse_sizes(const char* text) {
  std::vector<std::int64_t> sizes;
  for (const char* p = text; *p != '\0';) {
    char* end = nullptr;
    sizes.push_back(std::strtoll(p, &end, 10));
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p != '\0') { break; }
  }
  return sizes;
}

bool wanted(const std::string& calls, const char* name) {
  return calls.empty() || ("," + calls + ",").find(std::string(",") + name + ",") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::int64_t> sizes{10000, 100000, 1000000, 10000000};
  int rounds = 15;
  std::string calls;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0) {
      std::puts(
          "usage: cpu_threads_bench [--sizes N,N,...] [--rounds R] [--calls hidden_layer,transform,sum_f32,"
          "sum_u8,reduce_max,fit,predict]\n"
          "cpu{} against cpu{1} per call and size, alternating rounds; CSV on stdout");
      return 0;
    }
    if (std::strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) { sizes = parse_sizes(argv[++i]); }
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) { rounds = std::max(3, std::atoi(argv[++i])); }
    if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) { calls = argv[++i]; }
  }
  std::printf("call,n,threads,median_ms_all,median_ms_one,ratio,spread_all,spread_one\n");
  int const threads = fusekit::default_threads();
  for (std::int64_t n : sizes) {
    data d(n);
    std::vector<std::pair<const char*, call_fn>> cases;
    auto const layer = fusekit::fuse(fusekit::normalize{255.0f}, fusekit::weigh{}, fusekit::tanh_activate{});
    cases.emplace_back("hidden_layer", [&](const fusekit::cpu& p) { fusekit::hidden_layer(p, d.grey, d.w, d.out); });
    cases.emplace_back("transform",
                       [&, layer](const fusekit::cpu& p) { fusekit::transform(p, d.out, layer, d.grey, d.w); });
    cases.emplace_back("sum_f32", [&](const fusekit::cpu& p) { sink = fusekit::sum(p, d.x); });
    cases.emplace_back("sum_u8", [&](const fusekit::cpu& p) {
      sink = static_cast<double>(
          fusekit::sum(p, d.grey, fusekit::reduce_algorithm::deterministic, fusekit::accumulate_in<std::uint64_t>{}));
    });
    cases.emplace_back("reduce_max", [&](const fusekit::cpu& p) {
      float m = 0;
      fusekit::reduce(p, d.x, &m, fusekit::maximum{}, -1e30f);
      sink = m;
    });
    fit_data f(n);
    fusekit::matrix<const double> X(f.X.data(), f.K, f.L), Y(f.Y.data(), f.K, f.N);
    fusekit::matrix<double> W(f.W.data(), f.N, f.L), Y_hat(f.Y_hat.data(), f.K, f.N);
    fusekit::matrix<const double> Wc(f.W.data(), f.N, f.L);
    if (n <= 1000000) {
      cases.emplace_back("fit", [&](const fusekit::cpu& p) {
        sink = static_cast<double>(fusekit::fit(p, X, Y, W, fusekit::gd_options::recommended()).outputs.size());
      });
    }
    cases.emplace_back("predict", [&](const fusekit::cpu& p) { fusekit::predict(p, X, Wc, Y_hat); });
    for (auto& [name, call] : cases) {
      if (!wanted(calls, name)) { continue; }
      call(fusekit::cpu{});  // warm: pages, helpers
      call(fusekit::cpu{1});
      std::vector<double> all, one;
      auto const time = [&](const fusekit::cpu& p, std::vector<double>& into) {
        // Repeat a short call until 2 ms have passed: a median of medians.
        int reps = 0;
        auto const start = clock_type::now();
        double elapsed = 0;
        do {
          call(p);
          ++reps;
          elapsed = std::chrono::duration<double, std::milli>(clock_type::now() - start).count();
        } while (elapsed < 2.0 && reps < 1000);
        into.push_back(elapsed / reps);
      };
      for (int r = 0; r < rounds; ++r) {
        if (r % 2 == 0) {
          time(fusekit::cpu{}, all);
          time(fusekit::cpu{1}, one);
        } else {
          time(fusekit::cpu{1}, one);
          time(fusekit::cpu{}, all);
        }
      }
      double const ma = median(all), mo = median(one);
      std::printf("%s,%lld,%d,%.5f,%.5f,%.3f,%.2f,%.2f\n", name, static_cast<long long>(n), threads, ma, mo, ma / mo,
                  spread(all), spread(one));
      std::fflush(stdout);
    }
  }
  return 0;
}
