// SPDX-License-Identifier: Apache-2.0
// fusekit::fit with ridge 1 and an intercept on 1000 x 100 x 10, recommended(): mean time of `reps` fits and
// an FNV hash of W and b (the same bits before and after a change). Usage: ridge_harness [reps] [refinement_steps]
// [threads] Build: g++ -std=c++17 -O3 -fopenmp -I <fusekit>/include -I /usr/local/cuda/include/cccl ridge_harness.cpp
#include <fusekit/fusekit.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
#include <cstdlib>
#include <cstring>
int main(int argc, char** argv) {
  int const reps = argc > 1 ? std::atoi(argv[1]) : 200;
  int const steps = argc > 2 ? std::atoi(argv[2]) : 2;
  std::int64_t const K = 1000, L = 100, N = 10;
  std::mt19937_64 g(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> X(K * L), Y(K * N), Wt(N * L), W(N * L), b(N);
  for (auto& x : X) x = u(g);
  for (auto& x : Wt) x = u(g);
  for (std::int64_t k = 0; k < K; ++k)
    for (std::int64_t n = 0; n < N; ++n) {
      double s = 5;
      for (std::int64_t l = 0; l < L; ++l) s += X[k * L + l] * Wt[n * L + l];
      Y[k * N + n] = s;
    }
  fusekit::gd_options o = fusekit::gd_options::recommended();
  o.ridge = 1.0;
  o.fit_intercept = true;
  o.refinement_steps = steps;
  fusekit::matrix<const double> Xv(X.data(), K, L), Yv(Y.data(), K, N);
  fusekit::matrix<double> Wv(W.data(), N, L);
  fusekit::cpu pol{};
  pol.threads = argc > 3 ? std::atoi(argv[3]) : 1;
  auto t0 = std::chrono::steady_clock::now();
  fusekit::fit_report r;
  for (int i = 0; i < reps; ++i) r = fusekit::fit(pol, Xv, Yv, Wv, o, fusekit::fit_extras<double>{{}, b});
  auto t1 = std::chrono::steady_clock::now();
  unsigned long long hash = 1469598103934665603ull;
  for (double v : W) {
    unsigned long long u;
    std::memcpy(&u, &v, 8);
    hash = (hash ^ u) * 1099511628211ull;
  }
  for (double v : b) {
    unsigned long long u;
    std::memcpy(&u, &v, 8);
    hash = (hash ^ u) * 1099511628211ull;
  }
  std::printf("hash %016llx ", hash);
  std::printf("%.3f ms  %s\n", std::chrono::duration<double, std::milli>(t1 - t0).count() / reps, r.summary().c_str());
}
