// SPDX-License-Identifier: Apache-2.0
// The trainer on every kind of data a user brings (docs/trainer.md, "Every
// kind of data"), on the CPU: for each kind, the data, its least-squares
// solution by Householder QR in long double (the exact reference; none for
// the rank-deficient kinds, whose answer depends on the method, nor for the
// largest), and fusekit's fits with
//
//   previous_recommended  conjugate gradients, Jacobi, rtol 1e-13, one refinement step
//              (gd_options::recommended() of the previous release)
//   after      gd_options::recommended() (Cholesky, up to two steps)
//   min_norm   recommended() with preconditioner none (rank-deficient kinds)
//   sklearn    ridge 1.0, an intercept and sample weights, and the intercept
//              and weights alone (the weighted kind; its reference, the same
//              in long double, per fit)
//
// Each fit's W (and intercepts) and time (the best of `--repeat` runs) go to
// --out DIR, with X, Y and the reference as raw little-endian doubles, for
// bench/peers/data_kinds.py, which runs np.linalg.lstsq and scikit-learn on
// the same files and prints the table side by side.
//
//     data_kinds_bench --out DIR [--repeat 3] [--quick]
#include <fusekit/fusekit.hpp>

#include "common/data_kinds.hpp"
#include "common/train_problem.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

using fusekit::gd_options;
using fusekit::test::problem;

struct kind {
  std::string name;
  problem<double> p;
  bool reference;  // a full-rank kind: the QR reference is its answer
  bool rank_deficient;
  bool weighted;  // the scikit-learn kind: ridge, intercept, sample weights
};

void write(const std::string& path, const std::vector<double>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(double)));
}

gd_options before() {
  gd_options o;
  o.method = fusekit::gd_method::conjugate_gradient;
  o.preconditioner = fusekit::gd_preconditioner::jacobi;
  o.relative_tolerance = 1e-13;
  o.tolerance = 0;
  o.refinement_steps = 1;
  return o;
}

std::vector<kind> kinds(bool quick) {
  using namespace fusekit::test;
  std::int64_t const big = quick ? 20000 : 100000;
  std::vector<kind> k;
  k.push_back({"polynomial_degree7", poly_problem<double>(big, 7, 1, 0.1), true, false, false});
  k.push_back({"vandermonde_L10", vandermonde_problem<double>(big, 10, 2, 0.01), true, false, false});
  k.push_back(
      {"decaying_kappa1e6", decaying_problem<double>(quick ? 4000 : 20000, 64, 6.0, 3, 1e-3), true, false, false});
  k.push_back(
      {"no_gap_kappa1e4", decaying_problem<double>(quick ? 4000 : 20000, 128, 4.0, 4, 1e-3, true), true, false, false});
  k.push_back(
      {"raw_tabular_1e6x64", make_raw_problem<double>(quick ? 50000 : 1000000, 64, 4, 5, 0.1), true, false, false});
  {  // a column copied in other units (×1000): dependent columns
    auto p = make_raw_problem<double>(5000, 20, 2, 6, 0.1);
    for (std::int64_t r = 0; r < p.K; ++r) { p.X[r * 20 + 7] = 1000.0 * p.X[r * 20 + 3]; }
    k.push_back({"copy_in_other_units", std::move(p), false, true, false});
  }
  k.push_back({"wide_K50_L200_raw", make_raw_problem<double>(50, 200, 2, 7, 0.1), false, true, false});
  {  // polynomial terms that depend on one another: 1, x, x², 2x + 3, x² − x
    auto q = poly_problem<double>(5000, 2, 8, 0.1);
    problem<double> p{5000, 5, 2, std::vector<double>(5000 * 5), q.Y, {}};
    for (std::int64_t r = 0; r < 5000; ++r) {
      double const x = q.X[r * 3 + 1], x2 = q.X[r * 3 + 2];
      double const row[5] = {1.0, x, x2, 2 * x + 3, x2 - x};
      std::memcpy(&p.X[r * 5], row, sizeof row);
    }
    k.push_back({"dependent_polynomial", std::move(p), false, true, false});
  }
  {
    auto p = make_problem<double>(10000, 8, 2, 9, false, 0.1);
    for (std::int64_t r = 0; r < p.K; ++r) { p.X[r * 8 + 2] *= 1e-158; }
    k.push_back({"tiny_units_1e-158", std::move(p), true, false, false});
  }
  k.push_back({"weighted_ridge_intercept", make_raw_problem<double>(20000, 16, 2, 10, 0.3), false, false, true});
  return k;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out;
  int repeat = 3;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    std::string const a = argv[i];
    if (a == "--out" && i + 1 < argc) {
      out = argv[++i];
    } else if (a == "--repeat" && i + 1 < argc) {
      repeat = std::stoi(argv[++i]);
    } else if (a == "--quick") {
      quick = true;
    } else {
      std::printf(
          "usage: data_kinds_bench --out DIR [--repeat N] [--quick]\n"
          "  writes DIR/kinds.json and each kind's X, Y, reference and fits (raw doubles)\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (out.empty()) {
    std::printf("usage: data_kinds_bench --out DIR [--repeat N] [--quick]\n");
    return 2;
  }
  std::string json = "{\"kinds\": [\n";
  bool first_kind = true;
  for (auto& k : kinds(quick)) {
    auto const& p = k.p;
    std::string const base = out + "/" + k.name;
    write(base + ".X.bin", p.X);
    write(base + ".Y.bin", p.Y);
    if (k.reference) {
      auto const ref = fusekit::test::least_squares_reference(p);
      write(base + ".ref.bin", std::vector<double>(ref.begin(), ref.end()));
    }
    std::vector<double> s(static_cast<std::size_t>(p.K), 1.0);
    for (std::int64_t r = 0; r < p.K; ++r) { s[r] = 0.25 + static_cast<double>(r % 4); }
    if (k.weighted) { write(base + ".weights.bin", s); }
    std::vector<std::pair<std::string, gd_options>> configs = {{"previous_recommended", before()},
                                                               {"after", gd_options::recommended()}};
    if (k.rank_deficient) {
      gd_options m = gd_options::recommended();
      m.preconditioner = fusekit::gd_preconditioner::none;
      configs.push_back({"min_norm", m});
    }
    if (k.weighted) {
      gd_options r = gd_options::recommended();
      r.ridge = 1.0;
      r.fit_intercept = true;
      configs = {{"ridge_intercept_weights", r}};
      gd_options l = gd_options::recommended();
      l.fit_intercept = true;
      configs.push_back({"intercept_weights", l});
    }
    json += std::string(first_kind ? "" : ",\n") + "{\"name\": \"" + k.name + "\", \"K\": " + std::to_string(p.K) +
            ", \"L\": " + std::to_string(p.L) + ", \"N\": " + std::to_string(p.N) +
            ", \"reference\": " + (k.reference ? "true" : "false") +
            ", \"rank_deficient\": " + (k.rank_deficient ? "true" : "false") + ", \"fits\": [";
    first_kind = false;
    bool first_fit = true;
    for (auto& [name, o] : configs) {
      std::vector<double> W(static_cast<std::size_t>(p.N * p.L)), b(static_cast<std::size_t>(p.N));
      double best = 1e300;
      fusekit::fit_report r;
      for (int t = 0; t < repeat; ++t) {
        auto const t0 = std::chrono::steady_clock::now();
        r = fusekit::fit(fusekit::cpu{}, fusekit::matrix<const double>(p.X.data(), p.K, p.L),
                         fusekit::matrix<const double>(p.Y.data(), p.K, p.N),
                         fusekit::matrix<double>(W.data(), p.N, p.L), o,
                         k.weighted ? fusekit::fit_extras<double>{s, b} : fusekit::fit_extras<double>{});
        double const sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        best = sec < best ? sec : best;
      }
      write(base + "." + name + ".W.bin", W);
      if (k.weighted) {
        write(base + "." + name + ".b.bin", b);
        std::vector<long double> W_ref, b_ref;
        fusekit::test::weighted_ridge_reference(p, s, o.ridge, o.fit_intercept, W_ref, b_ref);
        write(base + "." + name + ".ref.bin", std::vector<double>(W_ref.begin(), W_ref.end()));
        write(base + "." + name + ".bref.bin", std::vector<double>(b_ref.begin(), b_ref.end()));
      }
      json +=
          std::string(first_fit ? "" : ", ") + "{\"config\": \"" + name + "\", \"seconds\": " + std::to_string(best) +
          ", \"ridge\": " + std::to_string(o.ridge) + ", \"fit_intercept\": " + (o.fit_intercept ? "true" : "false") +
          ", \"status\": \"" + r.summary().substr(0, r.summary().find('.')) +
          "\", \"iterations\": " + std::to_string(r.most_iterations()) + ", \"preconditioner\": \"" +
          fusekit::to_string(r.preconditioner) + "\", \"formulation\": \"" + fusekit::to_string(r.formulation) + "\"}";
      first_fit = false;
      std::printf("%-26s %-24s %8.4f s  %s\n", k.name.c_str(), name.c_str(), best, r.summary().c_str());
      std::fflush(stdout);
    }
    json += "]}";
  }
  json += "\n]}\n";
  std::ofstream(out + "/kinds.json") << json;
  return 0;
}
